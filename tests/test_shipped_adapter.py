"""The LoRA adapter shipped in data/adapters (issue 18; its MODEL_CARD.md gives the run): a llama.cpp LoRA of
Qwen2.5-Coder-1.5B's q/v projections, rank 8, alpha 16, accepted on that base only. The base's sha256 is read from
finkg/models.toml (the installer's catalogue), not from the adapter's record. No model is loaded."""

from __future__ import annotations

import hashlib
import tomllib
from pathlib import Path

import pytest
from gguf import GGUFReader

from generation.llm.adapters import AdapterBaseMismatch, adapter_identity, check_adapter_base

ROOT = Path(__file__).resolve().parents[1]
ADAPTER = ROOT / "data" / "adapters" / "qwen2.5-coder-1.5b-tatqa-reader" / "adapter.gguf"
CATALOGUE = {m["name"]: m for m in tomllib.loads((ROOT / "finkg" / "models.toml").read_text())["model"]}


def test_the_adapter_is_the_model_cards_lora_of_qwens_q_and_v_projections():
    card = (ADAPTER.parent / "MODEL_CARD.md").read_text(encoding="utf-8")
    assert hashlib.sha256(ADAPTER.read_bytes()).hexdigest() in card
    reader = GGUFReader(str(ADAPTER))
    assert reader.fields["general.type"].contents() == "adapter"
    assert reader.fields["adapter.type"].contents() == "lora"
    assert reader.fields["adapter.lora.alpha"].contents() == 16.0
    assert reader.fields["general.architecture"].contents() == "qwen2"
    names = {t.name for t in reader.tensors}
    assert len(names) == 112  # 28 layers x (q, v) x (lora_a, lora_b)
    assert {n.split(".")[2] for n in names} == {"attn_q", "attn_v"}
    ranks = {int(min(t.shape)) for t in reader.tensors}
    assert ranks == {8}
    assert adapter_identity(ADAPTER) == "ed7bdee79520eb12"  # the id in the answers of the README's runs


def test_the_adapter_loads_on_its_base_only():
    qwen = CATALOGUE["qwen2.5-coder-1.5b-instruct-q4_k_m"]["sha256"]
    smol = CATALOGUE["smollm2-135m-instruct-q4_1"]["sha256"]
    check_adapter_base(ADAPTER, f"gguf:{qwen}", "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf")
    with pytest.raises(AdapterBaseMismatch, match=r"qwen2\.5-coder-1\.5b.*SmolLM2"):
        check_adapter_base(ADAPTER, f"gguf:{smol}", "SmolLM2-135M-Instruct.Q4_1.gguf")
