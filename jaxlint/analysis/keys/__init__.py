"""The PRNG key dataflow (JAX301) over the path engine."""
