"""Market and macro data: AKShare indicators."""
