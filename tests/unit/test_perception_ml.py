"""The torch backends' code paths with tiny random-initialized models built here: the real
transformers Grounding DINO and open_clip classes, saved to local files and loaded back
through perception's local-weights paths. No downloads."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw

from perception import Box, LocateStatus, Perception, PerceptionConfig, WeightsMissingError

pytestmark = pytest.mark.ml

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
open_clip = pytest.importorskip("open_clip")

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "icon", ".", "red", "heart", "blue", "gear"]
TINY_CLIP = "perception-test-tiny-clip"


@pytest.fixture(scope="module")
def tiny_grounding_dino(tmp_path_factory) -> Path:
    from transformers import (
        BertConfig,
        BertTokenizer,
        GroundingDinoConfig,
        GroundingDinoForObjectDetection,
        GroundingDinoImageProcessor,
        GroundingDinoProcessor,
        SwinConfig,
    )

    folder = tmp_path_factory.mktemp("grounding-dino-tiny")
    (folder / "vocab.txt").write_text("\n".join(VOCAB))
    # BertTokenizerFast(vocab_file=...) maps everything to [UNK] in transformers 5; this works
    tokenizer = BertTokenizer(vocab=str(folder / "vocab.txt"))
    assert tokenizer("icon.").input_ids == [2, 5, 6, 3]
    torch.manual_seed(0)
    config = GroundingDinoConfig(
        backbone_config=SwinConfig(
            embed_dim=8, depths=[1, 1, 1, 1], num_heads=[1, 1, 1, 1], window_size=7,
            out_features=["stage2", "stage3", "stage4"],
        ),
        text_config=BertConfig(
            vocab_size=len(VOCAB), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
            intermediate_size=32, max_position_embeddings=64,
        ),
        d_model=32, encoder_layers=1, decoder_layers=2, encoder_attention_heads=2, decoder_attention_heads=2,
        encoder_ffn_dim=32, decoder_ffn_dim=32, num_queries=30, encoder_n_points=2, decoder_n_points=2,
        max_text_len=32, use_pretrained_backbone=False,
    )  # fmt: skip
    model = GroundingDinoForObjectDetection(config)
    processor = GroundingDinoProcessor(
        image_processor=GroundingDinoImageProcessor(size={"shortest_edge": 224, "longest_edge": 448}),
        tokenizer=tokenizer,
    )
    out = folder / "model"
    model.save_pretrained(out)
    processor.save_pretrained(out)
    return out


@pytest.fixture(scope="module")
def tiny_clip_checkpoint(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("clip-tiny")
    config = {
        "embed_dim": 16,
        "vision_cfg": {"image_size": 32, "layers": 1, "width": 32, "patch_size": 16, "head_width": 16},
        "text_cfg": {"context_length": 16, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1},
    }
    (folder / f"{TINY_CLIP}.json").write_text(json.dumps(config))
    open_clip.add_model_config(str(folder / f"{TINY_CLIP}.json"))
    torch.manual_seed(0)
    model = open_clip.create_model(TINY_CLIP, pretrained=None)
    path = folder / "tiny-clip.pt"
    torch.save(model.state_dict(), path)
    return path


def screen() -> np.ndarray:
    image = Image.new("RGB", (540, 1170), "white")
    draw = ImageDraw.Draw(image)
    draw.ellipse((420, 60, 500, 140), fill=(220, 30, 30))
    draw.rectangle((40, 500, 120, 580), fill=(30, 60, 220))
    draw.polygon([(300, 1000), (380, 1000), (340, 930)], fill=(40, 180, 60))
    return np.asarray(image)


# (compute_device, half_precision): the CPU in fp32 and under fp16 autocast (the path a GPU
# takes), and the GPU itself where there is one
PRECISIONS = [("cpu", False), ("cpu", True)] + ([("cuda", None)] if torch.cuda.is_available() else [])


@pytest.mark.parametrize(("device", "half"), PRECISIONS)
def test_grounding_dino_detector_from_local_folder(tiny_grounding_dino: Path, device: str, half: bool | None) -> None:
    config = PerceptionConfig(
        detector="grounding-dino", ranker="heuristic", grounding_dino_path=str(tiny_grounding_dino),
        box_threshold=0.0, text_threshold=0.0, compute_device=device, half_precision=half,
        icon_min_side_fraction=0.0, icon_max_area_fraction=1.0, nms_iou=0.95,
    )  # fmt: skip
    perception = Perception(config)
    image = screen()
    from perception.icons import IconLocator

    locator = perception._icon_locator()
    assert isinstance(locator, IconLocator)
    detector = locator._detector()
    assert detector.half is (device == "cuda" if half is None else half)
    raw = detector.detect(image, config)
    # threshold 0 keeps every query: a model that gives NaN (e.g. cast whole to fp16) keeps none
    assert len(raw) == detector.model.config.num_queries
    regions = locator.regions(image, "frame-a")
    assert regions and all(r.source == "grounding-dino" for r in regions)
    for r in regions:
        assert 0 <= r.box.left < r.box.right <= 540 and 0 <= r.box.top < r.box.bottom <= 1170
    # a stricter threshold keeps a subset of the boxes
    strict = Perception(
        PerceptionConfig(**{**config.__dict__, "box_threshold": 0.6, "cache_size": 0})
    )._icon_locator().regions(image, "frame-b")
    assert len(strict) <= len(regions)
    assert all(r.score >= 0.6 for r in strict)

    where = perception.find_icon(image, "red circle", "top right")
    assert where.backend == "grounding-dino+heuristic"
    top_right = [r.box.center for r in regions if r.box.center[0] >= 270 and r.box.center[1] <= 585]
    if not top_right:
        assert where.status is LocateStatus.NOT_FOUND
    elif where.status is LocateStatus.FOUND:
        assert where.point in top_right
    else:
        assert where.status is LocateStatus.CANDIDATES
        assert all(c.box.center in top_right for c in where.candidates)
    backends = perception.describe_backends()
    assert "grounding-dino" in backends["icon_detector"] and backends["compute_device"] == device
    expected = "fp16 autocast" if detector.half else "fp32"
    assert detector.describe().endswith(f"{device}, {expected})")
    assert backends["icon_detector"].endswith(f"{device}, {expected})")  # what doctor shows before any load


def test_detector_loads_once_per_process(tiny_grounding_dino: Path) -> None:
    config = PerceptionConfig(
        detector="grounding-dino", ranker="heuristic", grounding_dino_path=str(tiny_grounding_dino),
        compute_device="cpu",
    )  # fmt: skip
    a, b = Perception(config)._icon_locator(), Perception(config)._icon_locator()
    a._choose()
    b._choose()
    assert a._detector() is b._detector()


def test_clip_ranker_from_local_checkpoint(tiny_clip_checkpoint: Path) -> None:
    config = PerceptionConfig(
        detector="proposals", ranker="auto", clip_model=TINY_CLIP, clip_checkpoint=str(tiny_clip_checkpoint),
        compute_device="cpu",
    )  # fmt: skip
    perception = Perception(config)
    assert perception.describe_backends()["icon_ranker"].startswith("clip")  # auto picks local weights
    image = screen()
    where = perception.find_icon(image, "red circle", None)
    assert where.backend == "proposals+clip"
    assert where.status is LocateStatus.FOUND
    boxes = [r.box for r in perception._icon_locator().regions(image, "any-key")]
    assert len(boxes) == 3  # the three shapes, nothing else on this screen
    assert any(b.contains(*where.point) for b in boxes)

    ranker = perception._icon_locator()._ranker()
    batch = ranker.score(image, boxes, "red circle", [0.0] * 3)
    one_by_one = [ranker.score(image, [b], "red circle", [0.0])[0] for b in boxes]
    assert np.allclose(batch, one_by_one, atol=1e-4)  # batched ranking = per-crop ranking
    assert all(-1.0 <= s <= 1.0 for s in batch)
    other = ranker.score(image, boxes, "blue gear", [0.0] * 3)
    assert not np.allclose(batch, other)  # the description matters


@pytest.mark.parametrize(("device", "half"), PRECISIONS)
def test_clip_ranker_precisions_agree(tiny_clip_checkpoint: Path, device: str, half: bool | None) -> None:
    from perception.ml import ClipRanker

    config = PerceptionConfig(clip_model=TINY_CLIP, clip_checkpoint=str(tiny_clip_checkpoint), compute_device=device)
    full = ClipRanker(PerceptionConfig(**{**config.__dict__, "half_precision": False}))
    ranker = ClipRanker(PerceptionConfig(**{**config.__dict__, "half_precision": half}))
    image = screen()
    boxes = [Box(420, 60, 500, 140), Box(40, 500, 120, 580), Box(300, 930, 380, 1000)]
    exact = full.score(image, boxes, "red circle", [0.0] * 3)
    scores = ranker.score(image, boxes, "red circle", [0.0] * 3)
    assert all(isinstance(s, float) and np.isfinite(s) for s in scores)
    assert np.allclose(scores, exact, atol=0.01)


def test_missing_clip_checkpoint(tmp_path: Path) -> None:
    from perception.ml import ClipRanker

    with pytest.raises(WeightsMissingError) as info:
        ClipRanker(PerceptionConfig(clip_model="ViT-B-32", clip_checkpoint=str(tmp_path / "nope.pt"), compute_device="cpu"))
    assert "clip_checkpoint" in info.value.hint and info.value.backend == "clip"


def test_wrong_checkpoint_for_architecture(tiny_clip_checkpoint: Path) -> None:
    from perception.ml import ClipRanker

    with pytest.raises(WeightsMissingError) as info:
        ClipRanker(PerceptionConfig(clip_model="RN50", clip_checkpoint=str(tiny_clip_checkpoint), compute_device="cpu"))
    assert info.value.path == str(tiny_clip_checkpoint)


def test_missing_grounding_dino_folder(tmp_path: Path) -> None:
    from perception.ml import GroundingDinoDetector

    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(WeightsMissingError) as info:
        GroundingDinoDetector(PerceptionConfig(grounding_dino_path=str(empty), compute_device="cpu"))
    assert info.value.hint.startswith("hf download ")


def test_clip_tag_from_the_hub_cache_keeps_its_settings(tmp_path: Path, monkeypatch) -> None:
    """clip_checkpoint='openai' found in the Hugging Face cache is loaded by path, so the
    tag's QuickGELU must be passed on (plain GELU silently skews OpenAI's weights)."""
    import huggingface_hub.constants

    from perception.ml import _clip_build_options, _clip_local_file, clip_weights_available

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path))
    config = PerceptionConfig(clip_model="ViT-B-32", clip_checkpoint="openai")
    assert not clip_weights_available(config)
    repo = tmp_path / "models--timm--vit_base_patch32_clip_224.openai"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text("abc123")
    snapshot = repo / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    (snapshot / "open_clip_pytorch_model.bin").write_bytes(b"weights")
    path, tag_cfg = _clip_local_file(config)
    assert path == str(snapshot / "open_clip_pytorch_model.bin")
    assert _clip_build_options(tag_cfg)["force_quick_gelu"] is True
    assert _clip_build_options({})["force_quick_gelu"] is False  # a plain file: the model's own config


def test_clip_architecture_that_needs_the_hub_is_named(tiny_clip_checkpoint: Path, tmp_path: Path, monkeypatch) -> None:
    """roberta-ViT-B-32 builds its text tower from the hub: without it in the cache and
    without hub downloads, the error names the repo (was a download attempt, then an OSError)."""
    import huggingface_hub.constants

    from perception.ml import ClipRanker

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path))
    config = PerceptionConfig(clip_model="roberta-ViT-B-32", clip_checkpoint=str(tiny_clip_checkpoint), compute_device="cpu")
    with pytest.raises(WeightsMissingError) as info:
        ClipRanker(config)
    assert info.value.path == "roberta-base" and info.value.hint.startswith("hf download roberta-base")
