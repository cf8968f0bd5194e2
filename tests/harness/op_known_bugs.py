"""Samples that show an open bug: each runs as a strict xfail whose reason names the bug (so
the test starts failing, as a reminder to delete the entry, the day the bug is fixed)."""

KNOWN = {}  # none open: issue 40 part 1's length-one sorts and medians were fixed on main
