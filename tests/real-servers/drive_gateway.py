"""The official Python SDK client (`mcp` from PyPI) driving a gateway in the
2026-07-28 revision (it probes `server/discover`): lists, calls a tool with
progress, answers an upstream's elicitation, reads a file through
server-filesystem, gives up on a long call (the gateway cancels it
upstream), and waits on a listen stream for an upstream resource update.
Prints one JSON line:
    python drive_gateway.py MCP_URL FILE_PATH"""

import json
import sys

import anyio
import mcp_types as types
from mcp import Client
from mcp.shared.subscriptions import ResourceUpdated


async def main(url: str, path: str) -> dict:
    out: dict = {}

    async def on_elicit(_ctx, params: types.ElicitRequestParams) -> types.ElicitResult:
        out["elicitation_message"] = params.message
        return types.ElicitResult(action="accept", content={"name": "Ada", "check": True})

    async with Client(url, elicitation_callback=on_elicit, cache=None) as client:
        out["version"] = client.protocol_version
        out["tools"] = sorted(t.name for t in (await client.list_tools()).tools)

        progress: list[float] = []

        async def on_progress(p: float, _total: float | None, _message: str | None) -> None:
            progress.append(p)

        args = {"duration": 1, "steps": 3}
        await client.call_tool("ts__trigger-long-running-operation", args, progress_callback=on_progress)
        out["progress"] = progress

        elicited = await client.call_tool("ts__trigger-elicitation-request", {})
        out["elicited"] = json.dumps([c.model_dump() for c in elicited.content])

        read = await client.call_tool("files__read_text_file", {"path": path})
        out["file"] = "".join(getattr(c, "text", "") for c in read.content)

        # Given up after 1 s: the gateway cancels the upstream call.
        with anyio.move_on_after(1.0) as scope:
            await client.call_tool("ts__trigger-long-running-operation", {"duration": 30, "steps": 30})
        out["gave_up"] = scope.cancelled_caught

        # The TypeScript server sends updates of subscribed resources every 5 s
        # once asked to (the toggle may find them on already).
        toggled = await client.call_tool("ts__toggle-subscriber-updates", {})
        if "Stopped" in "".join(getattr(c, "text", "") for c in toggled.content):
            await client.call_tool("ts__toggle-subscriber-updates", {})
        uri = "demo://resource/dynamic/text/1"
        async with client.listen(resource_subscriptions=[uri]) as sub:
            with anyio.fail_after(20):
                async for event in sub:
                    if isinstance(event, ResourceUpdated):
                        out["updated"] = event.uri
                        break
        out["added"] = (await client.call_tool("py__add", {"a": 2, "b": 3})).structured_content
    return out


if __name__ == "__main__":
    try:
        result = anyio.run(main, sys.argv[1], sys.argv[2])
    except BaseException as e:  # reported, not raised: the test shows it
        import traceback

        result = {"error": "".join(traceback.format_exception(e))}
    print(json.dumps(result))
