"""A synthetic recorded turn: the offline default until the live engine runs the demo itself.

It is the seed's P4 scenario written down as events — a camera tool returning one JPEG on the
anthropic wire — so that the store, the bus and the log projection have a real turn to carry.
"""

from __future__ import annotations

import hashlib

from fuseforks.events.types import (
    ImageDelivery,
    ImageMeta,
    ImagesNormalized,
    RequestSent,
    ResponseReceived,
    RoundStarted,
    ToolCallRecord,
    ToolCalled,
    ToolResultRecorded,
    TurnEnded,
    TurnEvent,
    TurnStarted,
    Usage,
)


def synthetic_turn_rounds(agent: str = "agent_9") -> list[list[TurnEvent]]:
    """The events of one turn, grouped by round (each group is one atomic append)."""
    digest = hashlib.sha256(b"synthetic 640x424 frame").hexdigest()
    body = '{"height":424,"jpeg_bytes":21017,"seq":33985,"width":640}'
    call = ToolCallRecord(call_id="call_1", name="nik__live_view_image", arguments="{}")
    return [
        [
            TurnStarted(agent=agent, wire="anthropic", model="claude-sonnet-5-5",
                        endpoint_host="api.anthropic.com", language="ja",
                        request="NIK のライブビューを 1 枚撮って、写っているものを 1 文で説明して"),
            RoundStarted(round=1),
            RequestSent(round=1, wire="anthropic", model="claude-sonnet-5-5",
                        endpoint_host="api.anthropic.com", message_count=1),
            ResponseReceived(round=1, tool_calls=[call], usage=Usage(input_tokens=812,
                             output_tokens=31), stop_reason="tool_use"),
            ToolCalled(round=1, call_id="call_1", server="nik", name="nik__live_view_image"),
            ImagesNormalized(round=1, call_id="call_1", images=[ImageMeta(
                digest=digest, source_format="JPEG", media_type="image/jpeg", path="pass_through",
                width=640, height=424, size=21017, source_size=21017)]),
            ToolResultRecorded(round=1, call_id="call_1", name="nik__live_view_image", ok=True,
                               body=body, image_digests=[digest]),
        ],
        [
            RoundStarted(round=2),
            RequestSent(round=2, wire="anthropic", model="claude-sonnet-5-5",
                        endpoint_host="api.anthropic.com", message_count=3,
                        images=[ImageDelivery(digest=digest, call_id="call_1", placement="native")]),
            ResponseReceived(round=2, text="緑とマゼンタに塗り分けられた画面が写っています。",
                             usage=Usage(input_tokens=1268, output_tokens=24), stop_reason="end_turn"),
            TurnEnded(rounds=2, stop="-", answer="緑とマゼンタに塗り分けられた画面が写っています。"),
        ],
    ]
