"""SEC XBRL readers: Financial Statement Data Sets, companyfacts JSON, XBRL instances, evidence sentences."""
