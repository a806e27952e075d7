"""Number verification shared by memos and reports: number parsing, the memo verifier, report number checks."""
