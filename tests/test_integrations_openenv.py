"""The OpenEnv server end to end: `kerneljudge env-serve` as a real child process, answered from OpenEnv's
own WebSocket client (KernelEnvClient) and from plain HTTP, with recorded replies; serve's token rules."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import threading
import urllib.error
import urllib.request

import pytest

from .rl_replies import HACK, HONEST, OPTIONS, PROBLEMS, WRONG

pytest.importorskip("openenv.core")

_LISTENING = re.compile(r"listening on (http://\S+)")


class EnvServer:
    """`kerneljudge env-serve` on a free loopback port, stopped with SIGTERM."""

    def __init__(self, cache_dir: str, *args: str, timeout_s: float = 120.0):
        cmd = [sys.executable, "-m", "kerneljudge", "env-serve", "--port", "0", "--backend", "cpp", "--device", "cpu",
               "--cache-dir", cache_dir, "--trials", str(OPTIONS["trials"]), "--no-timing",
               "--problems", *[str(p) for p in PROBLEMS.values()], *args]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        self.url: str | None = None
        found = threading.Event()

        def read() -> None:
            for line in self.proc.stderr:
                self.lines.append(line)
                m = _LISTENING.search(line)
                if m and self.url is None:
                    self.url = m.group(1)
                    found.set()
            found.set()

        threading.Thread(target=read, daemon=True).start()
        if not found.wait(timeout_s) or self.url is None:
            self.stop()
            raise RuntimeError("env-serve did not start:\n" + "".join(self.lines[-40:]))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def post(url: str, body: dict, token: str | None = None) -> tuple[int, dict]:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=300) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        text = exc.read().decode(errors="replace")
        return exc.code, {"error": text}


@pytest.mark.slow
def test_reset_and_step_from_the_openenv_client_and_plain_http(cache_dir):
    from kerneljudge.integrations.openenv_client import KernelAction, KernelEnvClient

    server = EnvServer(cache_dir, "--turns", "2")
    try:
        async def sessions():
            async def episode(problem: str, replies: list[str]):
                async with KernelEnvClient(server.url, message_timeout_s=300) as env:
                    first = await env.reset(problem_id=problem)
                    steps = [await env.step(KernelAction(code=reply)) for reply in replies]
                    return first, steps, await env.state()

            # two sessions at once, each its own episode
            return await asyncio.gather(episode("gather_rows", [HONEST]), episode("row_sum", [HACK, HACK]))

        (first, honest, state), (_, hacks, hack_state) = asyncio.run(sessions())
        assert first.observation.prompt[0]["role"] == "system" and not first.done
        assert "return table[indices]" in first.observation.prompt[1]["content"]
        assert honest[0].observation.verdict == "correct" and honest[0].reward > 0 and honest[0].done
        assert state.accepted and state.step_count == 1
        assert [h.observation.verdict for h in hacks] == ["rejected", "rejected"]
        assert [h.reward for h in hacks] == [0.0, 0.0] and [h.done for h in hacks] == [False, True]
        assert "rejected" in hacks[0].observation.feedback.lower()          # the judge's report for the next turn
        assert hack_state.problem_id.endswith("row_sum.py") and not hack_state.accepted

        status, answer = post(server.url + "/reset", {"problem_id": "scale_relu", "seed": 3})
        assert status == 200 and answer["observation"]["problem_id"].endswith("scale_relu.py")
        status, answer = post(server.url + "/step", {"action": {"code": WRONG, "problem_id": "scale_relu"}})
        assert status == 200, answer
        assert answer["observation"]["verdict"] == "wrong_output" and answer["reward"] == 0.0
        assert answer["observation"]["feedback"] and not answer["done"]
        status, answer = post(server.url + "/step", {"action": {"code": HONEST, "problem_id": "gather_rows"}})
        assert status == 200 and answer["reward"] > 0 and answer["done"]
        status, answer = post(server.url + "/reset", {"problem_id": "no_such_problem"})
        assert status == 400 and "no_such_problem" in answer["error"]
    finally:
        server.stop()


@pytest.mark.slow
def test_a_token_is_required_on_every_request_and_session(tmp_path, cache_dir):
    from kerneljudge.integrations.openenv_client import KernelAction, KernelEnvClient

    token_file = tmp_path / "token"
    token_file.write_text("s3cret-token\n")
    token_file.chmod(0o600)
    server = EnvServer(cache_dir, "--token-file", str(token_file))
    try:
        assert post(server.url + "/reset", {})[0] == 401
        assert post(server.url + "/reset", {}, token="wrong")[0] == 401
        status, answer = post(server.url + "/reset", {"seed": 1}, token="s3cret-token")
        assert status == 200 and answer["observation"]["prompt"]

        async def session(token):
            async with KernelEnvClient(server.url, token=token) as env:
                await env.reset(problem_id="gather_rows")
                return await env.step(KernelAction(code=HONEST))

        with pytest.raises(ConnectionError):
            asyncio.run(session(None))
        assert asyncio.run(session("s3cret-token")).observation.verdict == "correct"
    finally:
        server.stop()


def test_a_reachable_bind_needs_a_token(cache_dir):
    proc = subprocess.run([sys.executable, "-m", "kerneljudge", "env-serve", "--host", "0.0.0.0", "--port", "0",
                           "--problems", str(PROBLEMS["row_sum"]), "--device", "cpu"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "--token-file" in proc.stderr
