"""finkg's generation layer (see ../shared/DESIGN.md for its place in the dependency direction)."""
