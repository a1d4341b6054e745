"""The catalog's own pure rules: what to publish from the packaged data, and when.

The estimator itself (specs, fit, VRAM, job time) is ``gpux_estimator``; this package turns
its catalogs into the records of the catalog topics and decides which topic needs them.
No I/O and no clock: the time of a publication is given.
"""
