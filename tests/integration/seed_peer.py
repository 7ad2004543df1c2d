#!/usr/bin/python3
"""A peer agent written from seed 002 (the inter-agent API specification):
its BaseMessage, content models, MessageFactory and MessageHandler as the
seed gives them, with pydantic 1.10 (Debian's python3-pydantic) and
aiofiles (python3-aiofiles). Run it with /usr/bin/python3, where those
packages are.

Adapted only to run: message_dir is madf's DATA/messages, whose inbox/AGENT/
is the seed's layout; the factory's two methods are the seed's, and the
other types are made the same way (create_message).

  seed_peer.py send MESSAGE_DIR
      sends one message of each of the 9 types into madf's inboxes, each
      from the agent that sends it in the seed's flows; prints one JSON
      line per message: {"type", "file", "message_id", "from", "to",
      "timestamp"} (timestamp as the peer wrote it).
  seed_peer.py assign MESSAGE_DIR START END
      as product_manager, sends research_agent_1 a market_data task for
      USD/JPY over START..END with the seed's create_task_assignment;
      prints its message_id.
  seed_peer.py recv MESSAGE_DIR AGENT
      runs AGENT's MessageHandler.receive_messages() once; prints one JSON
      line per message it parsed (see report()); the handler's own
      "Failed to process message ..." lines are printed as they are.
"""
import asyncio
import json
import sys
import uuid
from datetime import datetime, timedelta
from pathlib import Path

# ---------------------------------------------------------------------------
# Seed 002, as written
# ---------------------------------------------------------------------------
from pydantic import BaseModel, Field
from typing import Optional, Union, Dict, Any, List
from enum import Enum

import aiofiles


class AgentType(str, Enum):
    PRODUCT_MANAGER = "product_manager"
    RESEARCH_AGENT_1 = "research_agent_1"
    RESEARCH_AGENT_2 = "research_agent_2"
    VALIDATOR_AGENT = "validator_agent"


class MessageType(str, Enum):
    TASK_ASSIGNMENT = "task_assignment"
    TASK_ACCEPTANCE = "task_acceptance"
    TASK_PROGRESS = "task_progress"
    RESEARCH_RESULT = "research_result"
    VALIDATION_REQUEST = "validation_request"
    VALIDATION_RESULT = "validation_result"
    ERROR_REPORT = "error_report"
    HEARTBEAT = "heartbeat"
    SYSTEM_STATUS = "system_status"


class Priority(str, Enum):
    LOW = "low"
    NORMAL = "normal"
    HIGH = "high"
    URGENT = "urgent"


class BaseMessage(BaseModel):
    message_id: str = Field(..., description="Unique message identifier")
    from_agent: AgentType = Field(..., alias="from")
    to_agent: AgentType = Field(..., alias="to")
    type: MessageType
    timestamp: datetime
    content: Dict[str, Any]
    priority: Priority = Priority.NORMAL
    reply_to: Optional[str] = None
    timeout: Optional[int] = None

    class Config:
        allow_population_by_field_name = True


class TaskAssignmentContent(BaseModel):
    task_type: str                    # "forex_research", "news_analysis", etc.
    focus_area: str                  # "Asia/G10", "EUR markets", etc.
    target_pairs: List[str]          # ["USD/JPY", "EUR/USD"]
    timeframe: str                   # "this_week", "today", "last_24h"
    data_sources: List[str]          # ["alpha_vantage", "newsapi"]
    deadline: datetime               # Task completion deadline
    output_format: str               # "structured_json", "summary_report"
    special_instructions: Optional[str] = None


class TaskAcceptanceContent(BaseModel):
    task_id: str                     # Reference to original task message_id
    status: str                      # "accepted", "rejected", "queued"
    estimated_completion: datetime   # When agent expects to complete
    agent_capacity: float           # Current load percentage (0.0-1.0)
    rejection_reason: Optional[str] = None


class ResearchResultContent(BaseModel):
    task_id: str                    # Reference to original task
    status: str                     # "completed", "partial", "failed"
    execution_time_minutes: float   # Actual time taken
    data_points_collected: int      # Number of data points
    sources_accessed: List[str]     # Which sources were used
    key_findings: List[str]         # Summary of key findings
    raw_data: Dict[str, Any]       # Full research data
    confidence_score: float         # Confidence in results (0.0-1.0)
    data_freshness_hours: float    # Age of newest data point
    warnings: List[str]            # Any warnings or limitations


class ValidationRequestContent(BaseModel):
    research_results_to_validate: List[str]  # Message IDs of research results
    validation_type: str                     # "cross_reference", "timing_check", "fact_check"
    validation_sources: List[str]            # Sources for validation
    priority_areas: List[str]               # Focus areas for validation
    deadline: datetime


class ValidationIssue(BaseModel):
    issue_type: str                 # "conflict", "timing_error", "stale_data"
    severity: str                   # "low", "medium", "high", "critical"
    description: str
    affected_data: Dict[str, Any]
    recommendation: str
    confidence: float


class ValidationResultContent(BaseModel):
    validation_id: str              # Reference to validation request
    research_results_validated: List[str]
    overall_confidence: float       # Overall confidence after validation
    issues_found: List[ValidationIssue]
    validated_findings: List[str]   # Confirmed findings
    execution_time_minutes: float
    sources_consulted: List[str]


class ErrorReportContent(BaseModel):
    error_type: str                 # "api_failure", "data_format", "timeout", etc.
    error_message: str
    context: Dict[str, Any]         # Context when error occurred
    stack_trace: Optional[str] = None
    recovery_action: Optional[str] = None
    impact_level: str               # "low", "medium", "high", "critical"
    related_task_id: Optional[str] = None


class SystemStatusContent(BaseModel):
    agent_status: str               # "healthy", "degraded", "error", "offline"
    cpu_usage_percent: float
    memory_usage_mb: float
    active_tasks: int
    completed_tasks_today: int
    error_count_today: int
    last_successful_operation: datetime
    performance_metrics: Dict[str, float]


class MessageFactory:
    @staticmethod
    def create_task_assignment(from_agent: AgentType, to_agent: AgentType,
                             task_content: Dict[str, Any]) -> BaseMessage:
        return BaseMessage(
            message_id=f"{from_agent.value}_{datetime.utcnow().strftime('%Y%m%d_%H%M%S')}_{uuid.uuid4().hex[:6]}",
            from_agent=from_agent,
            to_agent=to_agent,
            type=MessageType.TASK_ASSIGNMENT,
            timestamp=datetime.utcnow(),
            content=task_content
        )

    @staticmethod
    def create_research_result(from_agent: AgentType, task_id: str,
                             result_content: Dict[str, Any]) -> BaseMessage:
        return BaseMessage(
            message_id=f"{from_agent.value}_{datetime.utcnow().strftime('%Y%m%d_%H%M%S')}_{uuid.uuid4().hex[:6]}",
            from_agent=from_agent,
            to_agent=AgentType.PRODUCT_MANAGER,
            type=MessageType.RESEARCH_RESULT,
            timestamp=datetime.utcnow(),
            content=result_content
        )


class MessageHandler:
    def __init__(self, message_dir: Path, agent_type: AgentType):
        self.message_dir = Path(message_dir)
        self.agent_type = agent_type
        self.inbox = self.message_dir / "inbox" / agent_type.value
        self.outbox = self.message_dir / "outbox" / agent_type.value

        # Create directories
        self.inbox.mkdir(parents=True, exist_ok=True)
        self.outbox.mkdir(parents=True, exist_ok=True)

    async def send_message(self, message: BaseMessage):
        """Send message to another agent."""
        target_inbox = self.message_dir / "inbox" / message.to_agent.value
        target_inbox.mkdir(parents=True, exist_ok=True)

        # Write to temp file first (atomic operation)
        temp_file = target_inbox / f"{message.message_id}.tmp"
        final_file = target_inbox / f"{message.message_id}.json"

        async with aiofiles.open(temp_file, 'w') as f:
            await f.write(message.json(indent=2))

        # Atomic rename
        temp_file.rename(final_file)

    async def receive_messages(self) -> List[BaseMessage]:
        """Receive all pending messages."""
        messages = []
        for message_file in self.inbox.glob("*.json"):
            try:
                async with aiofiles.open(message_file, 'r') as f:
                    content = await f.read()
                    message_data = json.loads(content)
                    message = BaseMessage(**message_data)
                    messages.append(message)

                # Move to processed
                processed_dir = self.message_dir / "processed"
                processed_dir.mkdir(exist_ok=True)
                message_file.rename(processed_dir / message_file.name)

            except Exception as e:
                # Move to failed
                failed_dir = self.message_dir / "failed"
                failed_dir.mkdir(exist_ok=True)
                message_file.rename(failed_dir / message_file.name)
                print(f"Failed to process message {message_file}: {e}")

        return messages

# ---------------------------------------------------------------------------
# The peer
# ---------------------------------------------------------------------------

PM = AgentType.PRODUCT_MANAGER
RA1 = AgentType.RESEARCH_AGENT_1
VAL = AgentType.VALIDATOR_AGENT

# The seed's content model of each type; task_progress and heartbeat have
# none in the seed (its BaseMessage takes any content dict).
CONTENT_MODELS = {
    MessageType.TASK_ASSIGNMENT: TaskAssignmentContent,
    MessageType.TASK_ACCEPTANCE: TaskAcceptanceContent,
    MessageType.RESEARCH_RESULT: ResearchResultContent,
    MessageType.VALIDATION_REQUEST: ValidationRequestContent,
    MessageType.VALIDATION_RESULT: ValidationResultContent,
    MessageType.ERROR_REPORT: ErrorReportContent,
    MessageType.SYSTEM_STATUS: SystemStatusContent,
}


def create_message(from_agent: AgentType, to_agent: AgentType,
                   type: MessageType, content: Dict[str, Any]) -> BaseMessage:
    """The seed factory's way, for the types it has no method for."""
    return BaseMessage(
        message_id=f"{from_agent.value}_{datetime.utcnow().strftime('%Y%m%d_%H%M%S')}_{uuid.uuid4().hex[:6]}",
        from_agent=from_agent,
        to_agent=to_agent,
        type=type,
        timestamp=datetime.utcnow(),
        content=content
    )


def nine_messages() -> List[BaseMessage]:
    """One message of each type, in the seed's flows, contents built with
    the seed's models (their .dict(): datetimes without a zone, None for
    the optional fields left out)."""
    soon = datetime.utcnow() + timedelta(hours=2)
    task = MessageFactory.create_task_assignment(PM, RA1, TaskAssignmentContent(
        task_type="forex_research", focus_area="Asia/G10",
        target_pairs=["USD/JPY", "EUR/USD"], timeframe="this_week",
        data_sources=["alpha_vantage", "newsapi"], deadline=soon,
        output_format="structured_json").dict())
    tid = task.message_id
    return [
        task,
        create_message(RA1, PM, MessageType.TASK_ACCEPTANCE, TaskAcceptanceContent(
            task_id=tid, status="accepted", estimated_completion=soon,
            agent_capacity=0.25).dict()),
        create_message(RA1, PM, MessageType.TASK_PROGRESS, {
            "task_id": tid, "percent_complete": 40.0, "current_step": "fetching rates",
            "estimated_completion": soon, "items_done": None, "items_total": None}),
        MessageFactory.create_research_result(RA1, tid, ResearchResultContent(
            task_id=tid, status="completed", execution_time_minutes=45.2,
            data_points_collected=127, sources_accessed=["alpha_vantage", "newsapi"],
            key_findings=["USD/JPY showing strength on Fed pause speculation"],
            raw_data={"forex_rates": {"USD/JPY": 149.2}}, confidence_score=0.87,
            data_freshness_hours=2.3, warnings=[]).dict()),
        create_message(PM, VAL, MessageType.VALIDATION_REQUEST, ValidationRequestContent(
            research_results_to_validate=[tid], validation_type="cross_reference",
            validation_sources=["reuters"], priority_areas=["USD/JPY"],
            deadline=soon).dict()),
        create_message(VAL, PM, MessageType.VALIDATION_RESULT, ValidationResultContent(
            validation_id=tid, research_results_validated=[tid], overall_confidence=0.8,
            issues_found=[ValidationIssue(
                issue_type="stale_data", severity="low", description="one day old",
                affected_data={"pair": "USD/JPY"}, recommendation="refresh",
                confidence=0.6)],
            validated_findings=["USD/JPY up"], execution_time_minutes=3.5,
            sources_consulted=["reuters"]).dict()),
        create_message(RA1, PM, MessageType.ERROR_REPORT, ErrorReportContent(
            error_type="api_failure", error_message="HTTP 429",
            context={"source": "alpha_vantage"}, impact_level="medium").dict()),
        create_message(RA1, PM, MessageType.HEARTBEAT, {
            "status": "busy", "uptime_seconds": 12.5, "active_tasks": 1,
            "current_task": None}),
        create_message(VAL, PM, MessageType.SYSTEM_STATUS, SystemStatusContent(
            agent_status="healthy", cpu_usage_percent=12.5, memory_usage_mb=256,
            active_tasks=0, completed_tasks_today=3, error_count_today=0,
            last_successful_operation=datetime.utcnow(),
            performance_metrics={"avg_latency_ms": 120.5}).dict()),
    ]


async def send_all(message_dir: Path):
    for m in nine_messages():
        await MessageHandler(message_dir, m.from_agent).send_message(m)
        written = json.loads((message_dir / "inbox" / m.to_agent.value /
                              f"{m.message_id}.json").read_text())
        print(json.dumps({"type": m.type.value, "message_id": m.message_id,
                          "file": f"{m.to_agent.value}/{m.message_id}.json",
                          "from": m.from_agent.value, "to": m.to_agent.value,
                          "timestamp": written["timestamp"]}), flush=True)


async def assign(message_dir: Path, start: str, end: str):
    """A task madf's researcher can do, made with the seed's factory from a
    plain dict, as the seed's own test_message_flow does."""
    m = MessageFactory.create_task_assignment(PM, RA1, {
        "task_type": "market_data", "focus_area": "Asia/G10",
        "target_pairs": ["USD/JPY"], "timeframe": f"{start}/{end}",
        "data_sources": ["csv"], "deadline": datetime.utcnow() + timedelta(hours=1),
        "output_format": "structured_json", "special_instructions": None,
        "window": {"start": start, "end": end}})
    await MessageHandler(message_dir, PM).send_message(m)
    print(m.message_id, flush=True)


def report(m: BaseMessage) -> Dict[str, Any]:
    """What the peer got: the envelope's fields as parsed, and whether the
    seed's content model of the type (if any) parses the content."""
    out = {"type": m.type.value, "message_id": m.message_id,
           "from": m.from_agent.value, "to": m.to_agent.value,
           "timestamp": m.timestamp.isoformat(),
           "utc": m.timestamp.utcoffset() == timedelta(0),
           "priority": m.priority.value, "reply_to": m.reply_to,
           "timeout": m.timeout, "task_id": m.content.get("task_id"),
           "model": None, "content_ok": True}
    model = CONTENT_MODELS.get(m.type)
    if model:
        out["model"] = model.__name__
        try:
            model(**m.content)
        except Exception as e:  # pydantic's ValidationError
            out["content_ok"] = False
            out["content_error"] = str(e)
    return out


async def recv(message_dir: Path, agent: AgentType):
    for m in await MessageHandler(message_dir, agent).receive_messages():
        print(json.dumps(report(m)), flush=True)


def main(argv: List[str]) -> int:
    if len(argv) >= 3 and argv[1] == "send":
        asyncio.run(send_all(Path(argv[2])))
    elif len(argv) == 5 and argv[1] == "assign":
        asyncio.run(assign(Path(argv[2]), argv[3], argv[4]))
    elif len(argv) == 4 and argv[1] == "recv":
        asyncio.run(recv(Path(argv[2]), AgentType(argv[3])))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
