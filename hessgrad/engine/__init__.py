"""The engine: registry, tensors, graphs, tapes, forward mode and the one backprop core.
It knows no numpy math: every derivative comes from a rule in the registry."""
