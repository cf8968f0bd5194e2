"""Tracing: ``hessgrad.function`` (a Python function traced into a graph once per input
signature, its plan compiled) and the caches of traces that check what the function reads
from outside its arguments (:mod:`.capture`)."""
