"""The registry of the models finkg trains itself (``finkg train embedder``, ``finkg train reader``).

One ``(:TunedModel {name})`` node per trained model directory: its kind (``embedder`` or ``reader``), base
model, path, the sha256 of its weights file, the training data and settings, and the measured metrics (JSON
text), and whether the measurement made it the default (``promoted``).
"""

from __future__ import annotations

MERGE_TUNED_MODELS = (
    "UNWIND $rows AS row\n"
    "MERGE (m:TunedModel {name: row.name})\n"
    "SET m += row.props, m.updated_at = datetime()\n"
    "RETURN count(m) AS updated"
)
"""Create or update ``(:TunedModel {name})`` nodes from ``$rows`` (``{"name", "props": {kind, base_model, path,
sha256, ...}}``; props are scalars or lists of scalars)."""

TUNED_MODELS = (
    "MATCH (m:TunedModel)\n"
    "WHERE $kind IS NULL OR m.kind = $kind\n"
    "RETURN m.name AS name, properties(m) AS props\n"
    "ORDER BY m.name"
)
"""The registered tuned models (all, or those of ``$kind``), by name."""
