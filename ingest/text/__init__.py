"""Text sources (FOMC statements, filing text, tweets) into point-in-time documents and chunks."""
