"""Market feedback (seed 000): event types, residual-return labels, market context, the frozen reader."""
