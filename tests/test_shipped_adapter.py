"""The LoRA adapters shipped in data/adapters (issue 18; each folder's MODEL_CARD.md gives its run): llama.cpp LoRAs
of the q/v projections, rank 8, alpha 16, each accepted on its own base only. The bases' sha256 are read from
finkg/models.toml (the installer's catalogue), not from the adapters' records. No model is loaded."""

from __future__ import annotations

import hashlib
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest
from gguf import GGUFReader

from generation.llm.adapters import AdapterBaseMismatch, adapter_identity, check_adapter_base

ROOT = Path(__file__).resolve().parents[1]
ADAPTERS = ROOT / "data" / "adapters"
CATALOGUE = {m["name"]: m for m in tomllib.loads((ROOT / "finkg" / "models.toml").read_text())["model"]}
QWEN, SMOL = "qwen2.5-coder-1.5b-instruct-q4_k_m", "smollm2-135m-instruct-q4_1"


@dataclass(frozen=True)
class Shipped:
    """What a shipped adapter must be: its folder, its base and another model of the catalogue, the GGUF
    architecture, the number of transformer layers, and the id the README's runs recorded on their answers."""

    folder: str
    base: str
    other: str
    architecture: str
    layers: int
    identity: str


SHIPPED = [
    Shipped("qwen2.5-coder-1.5b-tatqa-reader", QWEN, SMOL, "qwen2", 28, "ed7bdee79520eb12"),
    Shipped("smollm2-135m-tatqa-reader", SMOL, QWEN, "llama", 30, "4e27010b2804a7cc"),
]


def _file(shipped: Shipped) -> Path:
    return ADAPTERS / shipped.folder / "adapter.gguf"


@pytest.mark.parametrize("shipped", SHIPPED, ids=lambda s: s.folder)
def test_the_adapter_is_its_model_cards_lora_of_the_q_and_v_projections(shipped):
    adapter = _file(shipped)
    card = (adapter.parent / "MODEL_CARD.md").read_text(encoding="utf-8")
    assert hashlib.sha256(adapter.read_bytes()).hexdigest() in card
    reader = GGUFReader(str(adapter))
    assert reader.fields["general.type"].contents() == "adapter"
    assert reader.fields["adapter.type"].contents() == "lora"
    assert reader.fields["adapter.lora.alpha"].contents() == 16.0
    assert reader.fields["general.architecture"].contents() == shipped.architecture
    names = {t.name for t in reader.tensors}
    assert len(names) == shipped.layers * 2 * 2  # layers x (q, v) x (lora_a, lora_b)
    assert {n.split(".")[2] for n in names} == {"attn_q", "attn_v"}
    assert {int(min(t.shape)) for t in reader.tensors} == {8}
    assert adapter_identity(adapter) == shipped.identity


@pytest.mark.parametrize("shipped", SHIPPED, ids=lambda s: s.folder)
def test_the_adapter_loads_on_its_base_only(shipped):
    adapter = _file(shipped)
    base, other = CATALOGUE[shipped.base], CATALOGUE[shipped.other]
    check_adapter_base(adapter, f"gguf:{base['sha256']}", base["filename"])
    both = f"{re.escape(base['filename'])}.*{re.escape(other['filename'])}"  # the adapter's base, then the configured
    with pytest.raises(AdapterBaseMismatch, match=both):
        check_adapter_base(adapter, f"gguf:{other['sha256']}", other["filename"])
