"""The official Python SDK client (`mcp` from PyPI) in legacy mode
(initialize) running full session flows against one URL — a balancer in
front of several instances, each message free to land on any of them:
    python legacy_flows.py MCP_URL FLOWS CONCURRENCY
Each flow opens a session, lists the tools, calls one with progress,
answers an elicitation asked mid-call, subscribes to a resource and waits
for its update on the GET stream, gives up on a long call (the client sends
notifications/cancelled), pings, and ends the session (DELETE on close). A
step that fails is recorded with its error and the flow goes on in the same
session; the last ping (tried twice) says whether the session survived.
Prints one JSON line: {flows, ok, failedSteps, lostSessions, errors}."""

import json
import logging
import sys
import warnings

import anyio
import mcp_types as types
from mcp import Client

WATCHED = "test://watched-resource"


def text(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


async def flow(url: str, i: int) -> dict:
    errors: list[str] = []
    user = f"py-user-{i}"
    updated = anyio.Event()

    async def on_elicit(_ctx, _params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"username": user})

    async def on_message(message) -> None:
        root = getattr(message, "root", message)
        params = getattr(root, "params", None)
        if getattr(root, "method", None) == "notifications/resources/updated" and str(params.uri) == WATCHED:
            updated.set()

    async def step(name: str, body) -> bool:
        try:
            await body()
            return True
        except Exception as e:  # every failure is recorded, the flow goes on
            errors.append(f"{name}: {type(e).__name__}: {e}")
            return False

    alive = False
    # A session that was never opened (its initialize failed) is a failed
    # step, not a lost session.
    opened = False
    try:
        async with Client(
            url, mode="legacy", elicitation_callback=on_elicit, message_handler=on_message, cache=None
        ) as client:
            opened = True
            if client.protocol_version != "2025-11-25":
                errors.append(f"version: {client.protocol_version}")

            async def listed():
                tools = (await client.list_tools()).tools
                if not any(t.name == "test_elicitation" for t in tools):
                    raise RuntimeError("test_elicitation not listed")

            async def progressed():
                seen: list[float] = []

                async def on_progress(p: float, _total, _message) -> None:
                    seen.append(p)

                await client.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
                if len(seen) < 2:
                    raise RuntimeError(f"progress {seen}")

            async def elicited():
                r = await client.call_tool("test_elicitation", {"message": "Who are you?"})
                if user not in text(r):
                    raise RuntimeError(f"answer not seen: {text(r)}")

            async def subscribed():
                await client.subscribe_resource(WATCHED)
                # The GET stream opens on its own after initialize: an
                # update caused before it stood is not owed, so cause one
                # again a few times.
                for _ in range(5):
                    await client.call_tool("test_trigger_resource_update", {"uri": WATCHED})
                    with anyio.move_on_after(2.0):
                        await updated.wait()
                    if updated.is_set():
                        break
                if not updated.is_set():
                    raise RuntimeError("no notifications/resources/updated on the GET stream")
                await client.unsubscribe_resource(WATCHED)

            async def cancelled():
                with anyio.move_on_after(0.3) as scope:
                    await client.call_tool("sleep", {"ms": 10000})
                if not scope.cancelled_caught:
                    raise RuntimeError("the long call was not given up")

            async def pinged():
                await client.send_ping()

            await step("list", listed)
            await step("progress", progressed)
            await step("elicitation", elicited)
            await step("subscribe", subscribed)
            await step("cancel", cancelled)
            # A ping in flight on an instance that dies fails like any step; the
            # session survived if the next one, which the balancer sends elsewhere, is answered.
            alive = await step("ping", pinged) or await step("ping again", pinged)
    except Exception as e:
        errors.append(f"session: {type(e).__name__}: {e}")
    return {"errors": errors, "alive": alive or not opened}


async def main(url: str, flows: int, concurrency: int) -> dict:
    results: list[dict] = []
    counter = iter(range(flows))

    async def worker() -> None:
        for i in counter:
            results.append(await flow(url, i))

    async with anyio.create_task_group() as tg:
        for _ in range(concurrency):
            tg.start_soon(worker)
    errors = [e for r in results for e in r["errors"]]
    return {
        "flows": len(results),
        "ok": sum(1 for r in results if not r["errors"]),
        "failedSteps": len(errors),
        "lostSessions": sum(1 for r in results if not r["alive"]),
        "errors": errors[:20],
    }


if __name__ == "__main__":
    # The deprecation notes of legacy methods and the SDK's own log lines
    # are not this script's output.
    warnings.simplefilter("ignore")
    logging.disable(logging.WARNING)
    url, flows, concurrency = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    print(json.dumps(anyio.run(main, url, flows, concurrency)))
