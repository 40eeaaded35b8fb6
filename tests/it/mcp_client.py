"""Drives `selfdebug mcp` with the official Python MCP SDK's stdio client, for tests/it/mcp.rs.

Usage: mcp_client.py CONFIG.json. Runs every step in one session and prints one JSON object
with what each step returned; the Rust test asserts on it. Prints {"skip": REASON} and exits 0
when the SDK cannot be imported.
"""

import json
import os
import sys

try:
    import anyio
    from mcp import ClientSession, StdioServerParameters, types
    from mcp.client.stdio import stdio_client
except Exception as e:  # the SDK is missing or broken: the test skips with this reason
    print(json.dumps({"skip": f"cannot import the MCP SDK: {e!r}"}))
    sys.exit(0)


def dump(result):
    """A CallToolResult as plain data."""
    return {
        "is_error": bool(result.is_error),
        "structured": result.structured_content,
        "text": [c.text for c in result.content if getattr(c, "type", None) == "text"],
    }


def marker_has(path, state):
    try:
        with open(path) as f:
            return state in f.read().split("\n")
    except OSError:
        return False


async def main(cfg):
    params = StdioServerParameters(command=cfg["server"], args=["mcp"], env=dict(os.environ))
    out = {}
    # The log messages the server sent, in order, as [level, data].
    logs = []

    async def on_log(params):
        logs.append([params.level, params.data])

    async def list_roots(context):
        return types.ListRootsResult(roots=[types.Root(uri=f"file://{cfg['roots_dir']}")])

    async with stdio_client(params) as (read, write):
        async with ClientSession(
            read, write, list_roots_callback=list_roots, logging_callback=on_log
        ) as s:
            init = await s.initialize()
            out["protocol_version"] = init.protocol_version
            out["logging_capability"] = init.capabilities.logging is not None
            tools = await s.list_tools()
            out["tools"] = {
                t.name: {
                    "properties": sorted(t.input_schema.get("properties", {})),
                    "required": t.input_schema.get("required", []),
                    "output_schema": (t.output_schema or {}).get("$id"),
                    "title": t.title,
                    "annotations": t.annotations.model_dump(by_alias=True, exclude_none=True),
                }
                for t in tools.tools
            }
            # A relative root, found under the client's one root.
            out["relative_root"] = dump(
                await s.call_tool("config", {"root": cfg["relative_root"]})
            )
            out["relative_missing"] = dump(await s.call_tool("config", {"root": "no-such-dir"}))

            out["not_dir"] = dump(await s.call_tool("fix", {"root": cfg["not_dir"]}))
            out["parse"] = dump(await s.call_tool("parse", {"root": cfg["dry"], "log": cfg["log"]}))

            progress = []

            async def on_progress(value, total, message):
                progress.append([value, message])

            async def on_progress_total(value, total, message):
                progress.append([value, message, total])

            before = len(logs)
            out["dry_run"] = dump(
                await s.call_tool(
                    "fix", {"root": cfg["dry"]}, progress_callback=on_progress_total
                )
            )
            out["dry_run_progress"] = progress
            out["dry_run_logs"] = logs[before:]
            # The whole result as sent (structured content and text), in bytes of JSON.
            raw = await s.call_tool("fix", {"root": cfg["dry"]})
            out["summary_bytes"] = len(
                json.dumps(raw.model_dump(by_alias=True, exclude_none=True, mode="json"))
            )
            out["dry_full"] = dump(await s.call_tool("fix", {"root": cfg["dry"], "detail": "full"}))
            out["two"] = dump(await s.call_tool("fix", {"root": cfg["two"], "detail": "full"}))

            out["real"] = dump(await s.call_tool("fix", {"root": cfg["real"], "dry_run": False}))
            out["probe"] = dump(await s.call_tool("probe", {"root": cfg["dry"]}))
            for tool in ["rules", "config"]:
                out[tool] = dump(await s.call_tool(tool, {"root": cfg["dry"]}))

            # Nothing to do is a success for every tool: `real` is fixed by now.
            await s.set_logging_level("error")
            before = len(logs)
            out["probe_nothing"] = dump(await s.call_tool("probe", {"root": cfg["real"]}))
            out["parse_nothing"] = dump(
                await s.call_tool("parse", {"root": cfg["real"], "log": cfg["pass_log"]})
            )
            out["fix_nothing"] = dump(await s.call_tool("fix", {"root": cfg["real"]}))
            out["nothing_logs"] = logs[before:]
            # At level error, only the errors come.
            before = len(logs)
            out["parse_bad"] = dump(
                await s.call_tool("parse", {"root": cfg["real"], "log": "not a log"})
            )
            out["parse_bad_logs"] = logs[before:]
            await s.set_logging_level("info")

            # A run held while a candidate is in the file (the fixture's test waits while the
            # hold file names its state): a second run is refused by the lock, then the first
            # is cancelled, which must restore the file.
            held_progress = []

            async def on_held_progress(value, total, message):
                held_progress.append(message)

            async with anyio.create_task_group() as tg:

                async def held_run():
                    await s.call_tool(
                        "fix",
                        {"root": cfg["held"], "dry_run": False, "jobs": 1},
                        progress_callback=on_held_progress,
                    )

                tg.start_soon(held_run)
                while not marker_has(cfg["marker"], "candidate"):
                    await anyio.sleep(0.02)
                out["held_progress"] = list(held_progress)
                out["second"] = dump(await s.call_tool("fix", {"root": cfg["held"]}))
                tg.cancel_scope.cancel()
            # The cancelled run ends on its own (restoring first); until then its lock holds
            # and `restore` says so. Once free, `restore` must find nothing to restore.
            while True:
                r = dump(await s.call_tool("restore", {"root": cfg["held"]}))
                if not r["is_error"]:
                    break
                out["restore_while_locked"] = r
            out["restore_after_cancel"] = r
    # A client without roots: a relative root is refused, never taken from the server's cwd.
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            out["relative_no_roots"] = dump(
                await s.call_tool("config", {"root": cfg["relative_root"]})
            )
    # A client that declares roots and never answers roots/list: the call is answered anyway.
    async def never_answers(context):
        await anyio.sleep(3600)

    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, list_roots_callback=never_answers) as s:
            await s.initialize()
            out["relative_roots_stuck"] = dump(
                await s.call_tool("config", {"root": cfg["relative_root"]})
            )
    out["session_closed"] = True
    print(json.dumps(out))


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        config = json.load(f)
    anyio.run(main, config)
