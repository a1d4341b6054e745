"""The gateway's pure rules: who may do what, what a key looks like, what a request must hold."""
