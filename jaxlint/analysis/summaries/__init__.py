"""Facts about a function, computed from its definition and applied at every call."""
