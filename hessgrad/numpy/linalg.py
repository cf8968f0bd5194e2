"""``hessgrad.numpy.linalg``: numpy.linalg with derivatives."""

__all__ = []
