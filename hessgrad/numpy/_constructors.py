"""Array constructors (array, zeros, ones, eye, arange, linspace, ...)."""

__all__ = []
