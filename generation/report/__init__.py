"""Reports: two-stage generation over retrieved facts and knowledge (seed 004 section 3.3)."""
