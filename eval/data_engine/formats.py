"""The conversation files fine-tuning trainers read, one sample per line.

- ``llava``: LLaVA's instruction-tuning record ``{"id", "image", "conversations": [{"from":
  "human", "value": "<image>\\n…"}, {"from": "gpt", "value": …}]}`` (haotian-liu/LLaVA
  ``docs/Finetune_Custom_Data.md``; LLaVA loads a JSON list: ``to_llava_list``). A system
  prompt goes at the head of the human turn (LLaVA's records have no system role).
- ``sharegpt``: the multimodal ShareGPT form of LLaMA-Factory (hiyouga/LLaMA-Factory
  ``data/mllm_demo.json``: ``{"messages": [{"role", "content": "<image>…"}, …], "images":
  [path]}``, registered in ``data/dataset_info.json`` with ``"formatting": "sharegpt"``,
  ``columns`` messages/images and role/content ``tags``), which ms-swift's custom
  datasets read as they are (``messages`` + ``images``): the files Qwen2-VL / Qwen2.5-VL
  fine-tuning uses. ``dataset_info.json`` is written beside them, so
  ``dataset_dir: <this folder>`` and ``dataset: mobile_agent_ui_tars_train`` just work;
  image paths are relative to the folder (LLaMA-Factory's ``media_dir`` defaults to it).

May import: the standard library.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["FORMATS", "dataset_info", "file_name", "sample_line", "to_llava_list"]

FORMATS = ("llava", "sharegpt")


def file_name(fmt: str, dialect: str, split: str) -> str:
    prefix = "steps" if fmt == "llava" else "messages"
    return f"{prefix}-{dialect}-{split}.jsonl"


def sample_line(fmt: str, sample_id: str, image: str, messages: Sequence[Mapping[str, str]], dialect: str) -> str:
    """One line of ``fmt`` for a sample: ``messages`` are the prompt's (system, user with
    one ``<image>``) then the assistant's target."""
    if fmt == "sharegpt":
        return json.dumps({"messages": [dict(m) for m in messages], "images": [image]}, ensure_ascii=False)
    if fmt != "llava":
        raise ValueError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
    user = "\n\n".join(m["content"].replace("<image>", "").strip() for m in messages if m["role"] == "user")
    reply = next(m["content"] for m in messages if m["role"] == "assistant")
    human = "<image>\n" + (f"{system}\n\n" if system else "") + user
    return json.dumps({"id": sample_id, "image": image, "dialect": dialect,
                       "conversations": [{"from": "human", "value": human}, {"from": "gpt", "value": reply}]},
                      ensure_ascii=False)  # fmt: skip


def dataset_info(files: Sequence[tuple[str, str, str]]) -> dict[str, Any]:
    """LLaMA-Factory's ``dataset_info.json`` entries for the sharegpt files (dialect, split, file)."""
    tags = {"role_tag": "role", "content_tag": "content", "user_tag": "user", "assistant_tag": "assistant",
            "system_tag": "system"}  # fmt: skip
    return {
        f"mobile_agent_{dialect.replace('-', '_').replace('.', '_')}_{split}": {
            "file_name": name, "formatting": "sharegpt",
            "columns": {"messages": "messages", "images": "images"}, "tags": tags,
        }
        for dialect, split, name in files
    }


def to_llava_list(jsonl: Path, target: Path) -> int:
    """The step samples as the single JSON list LLaVA's trainer loads."""
    items = [json.loads(line) for line in jsonl.read_text(encoding="utf-8").splitlines() if line.strip()]
    target.write_text(json.dumps(items, ensure_ascii=False, indent=1), encoding="utf-8")
    return len(items)
