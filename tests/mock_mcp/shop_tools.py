"""A mock MCP tools file for the tests: what `adk-eval mock-mcp` serves.

`get_order` is declared by its function and answered by a function mock,
`cancel_order` by its function and a mock that raises, `refund` by a JSON
schema and a fixed answer.
"""

from adk_eval import ToolMock, ToolsetMock


def get_order(order_id: str) -> dict:
    """Looks an order up by its id."""
    raise NotImplementedError("declared only: its mock answers")


def cancel_order(order_id: str, reason: str = "") -> dict:
    """Cancels an order."""
    raise NotImplementedError("declared only: its mock answers")


tools = [
    get_order,
    cancel_order,
    ToolsetMock(
        {
            "refund": {
                "description": "Refunds an amount to the customer.",
                "parameters": {
                    "type": "object",
                    "properties": {"amount": {"type": "number"}},
                    "required": ["amount"],
                },
            }
        }
    ),
]

tool_mocks = {
    "get_order": ToolMock(lambda args, ctx: {"order_id": args["order_id"], "status": "shipped"}),
    "cancel_order": ToolMock.raising(PermissionError("orders cannot be cancelled")),
    "refund": ToolMock.returning({"refunded": True}),
}
