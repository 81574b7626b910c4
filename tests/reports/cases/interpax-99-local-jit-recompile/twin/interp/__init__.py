from interp.core import TRACES, interp1d

__all__ = ["TRACES", "interp1d"]
