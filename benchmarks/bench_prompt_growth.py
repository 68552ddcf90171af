"""What the planner sends per step over a 20-step run, next to the reference design.

Drives ``Planner.plan`` through the scripted OpenAI-compatible server (real HTTP, real
``openai`` client) with a growing synthetic history, a reflection every 4th step, and
real phone screenshots (the Mobile-Agent v1 reference runs when present, otherwise
frames rendered by the simulated phone). It measures, per request, the images and the
bytes actually received by the server, and computes what the reference design (every
past screenshot re-sent at each step) would send for the same run: same text, same
image encoding, one image per step so far.

Prints a table and the growth ratios (step 20 / step 1); the goal is a flat line for
us (images ≤ 2, bytes within a small factor) against linear growth for the reference.

    python benchmarks/bench_prompt_growth.py [--steps 20] [--long-side 1280]
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mobile_agent.planner import Planner, PlanRequest, encode_image  # noqa: E402
from tests.llm_server import ScriptedLLMServer  # noqa: E402

REFERENCE = ROOT.parent / "shared" / "reference" / "mobile-agent-v1-runs"  # ../shared beside the checkout
REPLY = "Observation: a list.\nThought: go on.\nAction: Click text (Next)"


def screenshots(count: int) -> tuple[list[np.ndarray], str]:
    files = sorted(REFERENCE.glob("*/*/*.jpg"))
    if files:
        frames = []
        for path in files[:count]:
            with Image.open(path) as img:
                # The runs were saved at half size; the phone's screen was 1080x2340.
                frames.append(np.asarray(img.convert("RGB").resize((1080, 2340), Image.Resampling.BILINEAR)))
        return frames, f"real phone screenshots from {REFERENCE} (upscaled to 1080x2340)"
    from simphone import Phone

    phone = Phone()
    frames = []
    scripts = [["input", "swipe", "900", "1200", "100", "1200"], ["input", "keyevent", "HOME"]]
    for i in range(count):
        phone.run(scripts[i % 2])
        with Image.open(io.BytesIO(phone.screencap_png())) as img:
            frames.append(np.asarray(img.convert("RGB")))
    return frames, "frames rendered by the simulated phone (1080x2400)"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--long-side", type=int, default=1280)
    parser.add_argument("--reflect-every", type=int, default=4)
    parser.add_argument("--json", type=Path, default=None, help="also write the rows here")
    args = parser.parse_args()

    frames, source = screenshots(args.steps)
    while len(frames) < args.steps:
        frames.append(frames[len(frames) % max(1, len(frames))])

    rows = []
    with ScriptedLLMServer(default=REPLY) as server:
        planner = Planner(server.planner_settings(image_long_side=args.long_side, jpeg_quality=80))
        history: list[str] = []
        ref_images: list[int] = []  # encoded size of each past screenshot, as the reference would re-send
        for step in range(1, args.steps + 1):
            shot = frames[step - 1]
            reflecting = step > 1 and step % args.reflect_every == 0
            request = PlanRequest(
                instruction="Find today's Lakers game result and write it in a note",
                screenshot=shot,
                history=list(history),
                feedback=["'Next' is not on the current screen."] if step % 3 == 0 else [],
                previous_screenshot=frames[step - 2] if reflecting else None,
                reflection_note="Your last operation did not change the screen." if reflecting else None,
            )
            planner.plan(request)
            sent = server.chat_requests[-1]
            image_bytes = sum(len(url) for url in sent.image_urls())
            text_bytes = len(sent.body) - image_bytes
            ref_images.append(len(encode_image(shot, args.long_side, 80).data_url))
            ref_total = text_bytes + sum(ref_images)
            rows.append(
                {
                    "step": step,
                    "images": len(sent.image_urls()),
                    "bytes": len(sent.body),
                    "text_bytes": text_bytes,
                    "ref_images": step,
                    "ref_bytes": ref_total,
                    "prompt_tokens_est": planner.usage.prompt_tokens,
                }
            )
            history.append(f"Click text (Item {step}) -> ok; the screen changed")

    print(f"screens: {source}; image long side {args.long_side}px, JPEG q80; reflection every {args.reflect_every} steps")
    print(f"{'step':>4} {'images':>6} {'bytes':>10} {'text B':>8} | {'ref images':>10} {'ref bytes':>11} {'ref/ours':>8}")
    for r in rows:
        print(
            f"{r['step']:>4} {r['images']:>6} {r['bytes']:>10,} {r['text_bytes']:>8,} | "
            f"{r['ref_images']:>10} {r['ref_bytes']:>11,} {r['ref_bytes'] / r['bytes']:>8.1f}"
        )
    first, last = rows[0], rows[-1]
    ours_total = sum(r["bytes"] for r in rows)
    ref_total = sum(r["ref_bytes"] for r in rows)
    print()
    print(f"max images per request: ours {max(r['images'] for r in rows)}, reference {last['ref_images']}")
    k = max(1, min(5, len(rows) // 4))
    head, tail = rows[:k], rows[-k:]

    def mean(rs: list[dict[str, int]], key: str) -> float:
        return sum(r[key] for r in rs) / len(rs)

    print(f"growth, mean of the last {k} requests / first {k}: ours {mean(tail, 'bytes') / mean(head, 'bytes'):.2f}x bytes, "
          f"reference {mean(tail, 'ref_bytes') / mean(head, 'ref_bytes'):.2f}x bytes")
    plain = [r for r in rows if r["images"] == 1]
    print(f"requests without reflection: {min(r['bytes'] for r in plain):,} to {max(r['bytes'] for r in plain):,} bytes "
          f"(the spread is the screenshots' JPEG sizes, not the step number)")
    print(f"text growth over the run (history): {first['text_bytes']:,} -> {last['text_bytes']:,} bytes")
    print(f"whole run: ours {ours_total / 1e6:.2f} MB, reference {ref_total / 1e6:.2f} MB "
          f"({ref_total / ours_total:.1f}x more)")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
