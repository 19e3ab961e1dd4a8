"""The ``replay`` provider: recorded replies served from a folder, so the whole pipeline runs offline.

    provider = get_provider("replay:tests/fixtures/replies")

The folder may hold any mix of three kinds of files. For each request they are tried in this order:

1. ``<key>.txt``: the reply, verbatim, to the request whose ``replay_key`` is ``<key>``. The key is the
   SHA-256 of the request without provider and model: messages, temperature, max_tokens, seed and sample
   (``replay_key(messages, temperature=..., max_tokens=..., seed=..., sample=...)``). A miss names the
   key it looked for, so a fixture can be written from the error message.
2. Recorded entries: ``*.json`` files anywhere below the folder in the cache format (see ``cache.py``), so
   a ``cache_dir`` filled by a real run is a replay folder as it is. They are matched by the same
   provider-free key; ``model="NAME"`` keeps only entries recorded for that model.
3. ``replies.jsonl``: scripted replies, one JSON object a line (blank lines are skipped):

       {"match": "class Model(nn.Module):\\n    def __init__(self, dim", "text": "```python\\n...\\n```"}
       {"match": "def forward(self, a, b)", "file": "matmul_turn0.txt"}
       {"match": "def forward(self, a, b)", "file": "matmul_turn1.txt", "finish_reason": "length"}
       {"match": "", "sample": 1, "text": "no code here"}

   ``match`` is a substring looked for in the system and user messages joined together ("" matches every
   request); ``text`` is the reply, or ``file`` names a text file relative to the folder; optional
   ``sample`` restricts a line to that sample index, ``finish_reason`` ("stop" or "length") and ``model``
   are reported in the Completion. Lines with the same ``match`` and ``sample`` form an ordered list:
   the n-th request from one sample index that selects the list gets its n-th line (so successive
   refinement turns get successive replies), and the last line repeats once the list is used up. When
   several lists match, one with an explicit ``sample`` wins, then the longest ``match``, then the first
   in the file.

A request that none of these answers raises ReplayMissError. Replayed completions have ``cached=True``
(no model was queried); scripted ones report zero usage and ``cost_usd=None``.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from pathlib import Path
from typing import Any, Sequence

from kerneljudge.generate.providers.cache import FORMAT, request_key
from kerneljudge.generate.providers.types import (
    Completion, Message, ProviderConfigError, ProviderError, check_messages,
)

log = logging.getLogger("kerneljudge.generate")

RULES_FILE = "replies.jsonl"


class ReplayMissError(ProviderError):
    """No recorded reply for this request."""

    def __init__(self, message: str, key: str):
        super().__init__(message)
        self.key = key


def replay_key(messages: Sequence[Message], *, temperature: float = 0.0, max_tokens: int = 4096,
               seed: int | None = None, sample: int = 0) -> str:
    """The key of ``<key>.txt`` and of recorded entries: the request hash without provider and model."""
    return request_key(None, None, check_messages(messages), temperature=temperature, max_tokens=max_tokens,
                       seed=seed, sample=sample)


@dataclasses.dataclass(frozen=True)
class _Rule:
    match: str
    sample: int | None
    text: str
    finish_reason: str | None
    model: str | None
    line: int


class ReplayProvider:
    """Serves replies recorded in a folder (format in the module docstring)."""

    name = "replay"
    network = False

    def __init__(self, folder: str, *, model: str | None = None):
        self.folder = Path(folder)
        self.model = str(folder)
        self.filter_model = model
        if not self.folder.is_dir():
            raise ProviderConfigError(f"replay folder {str(self.folder)!r} does not exist or is not a folder")
        self.groups: dict[tuple[str, int | None], list[_Rule]] = {}
        self._load_rules()
        self._entries: dict[str, dict[str, Any]] | None = None
        self._served: dict[tuple[str, int | None, int], int] = {}

    def __repr__(self) -> str:
        return f"ReplayProvider(folder={str(self.folder)!r})"

    def _load_rules(self) -> None:
        path = self.folder / RULES_FILE
        if not path.exists():
            return
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            where = f"{path}:{n}"
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as err:
                raise ProviderConfigError(f"{where}: not JSON: {err}") from None
            if not isinstance(obj, dict):
                raise ProviderConfigError(f"{where}: expected a JSON object")
            if ("text" in obj) == ("file" in obj):
                raise ProviderConfigError(f"{where}: give exactly one of 'text' and 'file'")
            if "text" in obj:
                text = obj["text"]
            else:
                try:
                    text = (self.folder / obj["file"]).read_text(encoding="utf-8")
                except OSError as err:
                    raise ProviderConfigError(f"{where}: cannot read {obj['file']!r}: {err}") from None
            sample = obj.get("sample")
            if not isinstance(text, str) or not isinstance(obj.get("match", ""), str) or \
                    (sample is not None and not isinstance(sample, int)):
                raise ProviderConfigError(f"{where}: 'match' and 'text' must be strings, 'sample' an integer")
            rule = _Rule(obj.get("match", ""), sample, text, obj.get("finish_reason"), obj.get("model"), n)
            self.groups.setdefault((rule.match, rule.sample), []).append(rule)

    def _load_entries(self) -> dict[str, dict[str, Any]]:
        if self._entries is not None:
            return self._entries
        entries: dict[str, dict[str, Any]] = {}
        for path in sorted(self.folder.rglob("*.json")):
            try:
                entry = json.loads(path.read_text(encoding="utf-8"))
                if not isinstance(entry, dict) or entry.get("format") != FORMAT:
                    continue
                req = entry["request"]
                if self.filter_model is not None and self.filter_model not in (
                        req.get("model"), f"{req.get('provider')}:{req.get('model')}"):
                    continue
                key = request_key(None, None, req["messages"], temperature=req["temperature"],
                                  max_tokens=req["max_tokens"], seed=req["seed"], sample=req["sample"])
            except (OSError, ValueError, KeyError, TypeError) as err:
                log.warning("replay: skipping %s: %s", path, err)
                continue
            if key in entries:
                log.warning("replay: %s answers the same request as an earlier entry; keeping the first", path)
                continue
            entries[key] = entry
        self._entries = entries
        return entries

    def _scripted(self, messages: list[dict[str, str]], sample: int) -> _Rule | None:
        text = "\n".join(m["content"] for m in messages if m["role"] != "assistant")
        best = None
        for (match, rule_sample), rules in self.groups.items():
            if match not in text or (rule_sample is not None and rule_sample != sample):
                continue
            rank = (rule_sample is not None, len(match), -rules[0].line)
            if best is None or rank > best[0]:
                best = (rank, (match, rule_sample))
        if best is None:
            return None
        group = best[1]
        rules = self.groups[group]
        counter = (group[0], group[1], sample)
        index = self._served.get(counter, 0)
        self._served[counter] = index + 1
        return rules[min(index, len(rules) - 1)]

    def reset(self) -> None:
        """Start every scripted list from its first line again."""
        self._served.clear()

    async def complete(self, messages: Sequence[Message], *, temperature: float = 0.0, max_tokens: int = 4096,
                       seed: int | None = None, sample: int = 0) -> Completion:
        checked = check_messages(messages)
        key = replay_key(checked, temperature=temperature, max_tokens=max_tokens, seed=seed, sample=sample)
        zero = {"prompt_tokens": 0, "completion_tokens": 0}
        txt = self.folder / f"{key}.txt"
        if txt.is_file():
            return Completion(text=txt.read_text(encoding="utf-8"), model="replay", usage=zero, cost_usd=None,
                              latency_s=0.0, cached=True, raw_id=f"replay-{key[:16]}", finish_reason="stop")
        entry = self._load_entries().get(key)
        if entry is not None:
            return dataclasses.replace(Completion.from_dict(entry["completion"]), cached=True)
        rule = self._scripted(checked, sample)
        if rule is not None:
            return Completion(text=rule.text, model=rule.model or "replay", usage=zero, cost_usd=None,
                              latency_s=0.0, cached=True, raw_id=f"replay-{RULES_FILE}:{rule.line}",
                              finish_reason=rule.finish_reason or "stop")
        raise ReplayMissError(
            f"replay: no recorded reply in {str(self.folder)!r} for request {key} (sample {sample}); add "
            f"{key}.txt there, or a line to {RULES_FILE} whose 'match' occurs in the prompt", key=key)

    async def aclose(self) -> None:
        return None


__all__ = ["ReplayProvider", "ReplayMissError", "replay_key", "RULES_FILE"]
