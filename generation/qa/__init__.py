"""Question answering over tables and text (TAT-QA answerers)."""
