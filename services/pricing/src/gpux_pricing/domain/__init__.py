"""The pricing service's pure rules: offer validation, FX, best ask and depth, candles."""
