"""The labelled contact-centre sets of issue 39 (`benchmarks/judge/data/contact_centre_zh.jsonl`, the fresh held-out
sets `contact_centre_zh_v2.jsonl` … `contact_centre_zh_v6.jsonl`): their shape,
labels that agree with their own turns and with the shop's policy file, enough positives and look-alike negatives per
item (in each half of the first set, which follows a stated split rule), nothing copied from the other sets, and an
export that rubriceval's readers take with the bot kept apart from the human agent."""
from __future__ import annotations

import csv
import json
import re
from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import pytest

from rubriceval.data.chatlog import ChatLogConfig
from rubriceval.data.io import read_dataset

ROOT = Path(__file__).parents[2]
DATA = ROOT / "benchmarks" / "judge" / "data"
POLICY = ROOT / "scorecards" / "ecommerce_policies_zh.md"
CARD = ROOT / "scorecards" / "ecommerce_qa_zh.yaml"

SPEAKER_ROLE = {"用户": "user", "机器人": "assistant", "客服": "assistant", "系统": "system"}
AGENT, BOT, CUSTOMER, SYSTEM = "客服", "机器人", "用户", "系统"
INTENTS = {"delivery_delay", "order_status", "refund", "return", "damaged", "invoice", "membership",
           "address_change", "account"}
SHANGHAI = timezone(timedelta(hours=8))


@dataclass(frozen=True)
class ContactCentreSet:
    """One export as its README section describes it."""
    file: str
    id_prefix: str
    rows: int                      # the first set says "at least", the held-out sets their exact size
    splits: tuple[str, ...]
    first_day: date                # Shanghai calendar days, inclusive
    last_day: date
    bot_version: str
    max_messages: int
    min_per_item: int              # positives and look-alikes per item: per half (first set) or whole set
    split_rule: bool               # the first set alternates dev / heldout within each stratum

    @property
    def path(self) -> Path:
        return DATA / self.file

    @property
    def days(self) -> int:
        return (self.last_day - self.first_day).days + 1


FIRST = ContactCentreSet("contact_centre_zh.jsonl", "cc", 48, ("dev", "heldout"), date(2026, 11, 16),
                         date(2026, 11, 29), "2026.11.4", 10, 5, True)
SETS = [
    FIRST,
    ContactCentreSet("contact_centre_zh_v2.jsonl", "cc2", 40, ("heldout_v2",), date(2026, 11, 29), date(2026, 12, 6),
                     "2026.11.6", 10, 8, False),
    ContactCentreSet("contact_centre_zh_v3.jsonl", "cc3", 48, ("heldout_v3",), date(2026, 12, 7), date(2026, 12, 13),
                     "2026.12.1", 12, 8, False),
    ContactCentreSet("contact_centre_zh_v4.jsonl", "cc4", 48, ("heldout_v4",), date(2026, 12, 14), date(2026, 12, 20),
                     "2026.12.3", 12, 8, False),
    ContactCentreSet("contact_centre_zh_v5.jsonl", "cc5", 48, ("heldout_v5",), date(2026, 12, 21), date(2026, 12, 27),
                     "2026.12.5", 12, 8, False),
    ContactCentreSet("contact_centre_zh_v6.jsonl", "cc6", 48, ("heldout_v6",), date(2026, 12, 28), date(2027, 1, 3),
                     "2026.12.6", 9, 8, False),
]
each_set = pytest.mark.parametrize("cc", SETS, ids=[s.id_prefix for s in SETS])


def rows(cc: ContactCentreSet = FIRST) -> list[dict]:
    return [json.loads(line) for line in cc.path.read_text(encoding="utf-8").splitlines() if line.strip()]


def squeeze(text: str) -> str:
    """Compare texts without the spaces Chinese writers put (or not) around digits."""
    return re.sub(r"\s+", "", text)


def facts(customer: dict) -> list[str]:
    """Every string the shop holds for this conversation's own customer."""
    values: list[str] = []
    for value in customer.values():
        values += value if isinstance(value, list) else [value]
    return [squeeze(v) for v in values]


def turn(row: dict, number: int) -> dict:
    assert 1 <= number <= len(row["messages"]), (row["id"], number)
    return row["messages"][number - 1]


def stratum(label: dict) -> str:
    """The split's stratum: promise class / data class / mood (README: the split rule)."""
    promise = ("over" if label["over_promise"]["value"] == "yes" else
               "allowed" if label["allowed_promises"] else "none")
    data = "leak" if label["leak"]["value"] == "yes" else "own" if label["own_data"] else "none"
    mood = {"NA": "calm", "yes": "soothed", "no": "unsoothed"}[label["soothed"]["value"]]
    return f"{promise}/{data}/{mood}"


@each_set
def test_every_row_is_a_chat_export_conversation_with_its_labels(cc):
    data = rows(cc)
    assert len(data) >= cc.rows if cc is FIRST else len(data) == cc.rows
    assert [r["id"] for r in data] == [f"{cc.id_prefix}-{n:02d}" for n in range(1, len(data) + 1)]
    agents: dict[str, tuple[str, str]] = {}
    starts = []
    for row in data:
        assert set(row) == {"id", "split", "intent", "messages", "metadata", "label"}, row["id"]
        assert row["split"] in cc.splits and row["intent"] in INTENTS, row["id"]
        meta = row["metadata"]
        assert set(meta) == {"agent_id", "agent_name", "skill_group", "channel", "bot_version", "customer_id",
                             "started_at", "ended_at"}, row["id"]
        assert meta["bot_version"] == cc.bot_version and meta["channel"] in ("app", "web", "小程序"), row["id"]
        assert 6 <= len(row["messages"]) <= cc.max_messages, row["id"]
        # one human agent per agent id, always in the same skill group
        assert agents.setdefault(meta["agent_id"], (meta["agent_name"], meta["skill_group"])) == \
            (meta["agent_name"], meta["skill_group"]), row["id"]
        speakers = [m["speaker"] for m in row["messages"]]
        for m in row["messages"]:
            assert set(m) == {"role", "speaker", "content", "timestamp"} and m["content"].strip(), row["id"]
            assert SPEAKER_ROLE[m["speaker"]] == m["role"], row["id"]
        assert speakers[0] == CUSTOMER and speakers[-1] in (CUSTOMER, AGENT), row["id"]
        # the bot answers first, then one handover (a system line naming the agent), then only the human agent
        handover = speakers.index(SYSTEM)
        assert speakers.count(SYSTEM) == 1 and BOT in speakers[:handover] and AGENT not in speakers[:handover]
        assert BOT not in speakers[handover:] and AGENT in speakers[handover:], row["id"]
        assert meta["agent_name"] in row["messages"][handover]["content"], row["id"]
        assert meta["skill_group"] in row["messages"][handover]["content"], row["id"]
        times = [datetime.fromisoformat(m["timestamp"].replace("Z", "+00:00")) for m in row["messages"]]
        days = {t.astimezone(SHANGHAI).date() for t in times}
        assert times == sorted(times) and cc.first_day <= min(days) and max(days) <= cc.last_day, row["id"]
        assert (meta["started_at"], meta["ended_at"]) == (row["messages"][0]["timestamp"],
                                                          row["messages"][-1]["timestamp"]), row["id"]
        starts.append(times[0])
    assert starts == sorted(starts)                                  # ids follow the export's order
    assert len(agents) >= 4 and len({group for _, group in agents.values()}) == 2
    assert len({s.astimezone(SHANGHAI).date() for s in starts}) == cc.days  # every day of the export


@each_set
def test_labels_are_consistent_with_their_turns(cc):
    for row in rows(cc):
        label, rid = row["label"], row["id"]
        assert set(label) == {"customer", "over_promise", "allowed_promises", "leak", "own_data", "customer_upset",
                              "soothed", "card", "stratum", "note"}, rid
        assert label["note"].strip() and {"name", "phone", "address", "orders"} <= set(label["customer"]), rid
        over, leak, upset, soothed = (label[k] for k in ("over_promise", "leak", "customer_upset", "soothed"))
        # values follow the evidence; a reason for every positive and for every soothing verdict
        assert over["value"] == ("yes" if over["claims"] else "no"), rid
        assert over["turns"] == sorted({c["turn"] for c in over["claims"]}), rid
        assert leak["value"] == ("yes" if leak["data"] else "no"), rid
        assert leak["turns"] == sorted({d["turn"] for d in leak["data"]}), rid
        assert upset["value"] == ("yes" if upset["turns"] else "no"), rid
        assert soothed["value"] == ("NA" if upset["value"] == "no" else "yes" if soothed["turns"] else "no"), rid
        for item in (over, leak, upset):
            assert bool(item["reason"].strip()) == (item["value"] == "yes"), rid
        assert bool(soothed["reason"].strip()) == (soothed["value"] != "NA"), rid
        # the card's three judgement items as a QA lead scores them (soothe N/A for a calm customer)
        assert label["card"] == {"promise": over["value"] == "yes", "leak_other": leak["value"] == "yes",
                                 "soothe": None if soothed["value"] == "NA" else soothed["value"] == "no"}, rid
        assert label["stratum"] == stratum(label), rid
        # every turn a label names exists, with the right speaker, and holds the quoted words
        for number in upset["turns"]:
            assert turn(row, number)["speaker"] == CUSTOMER, (rid, number)
        for number in soothed["turns"]:
            assert turn(row, number)["speaker"] == AGENT and number > min(upset["turns"]), (rid, number)
        for evidence in over["claims"] + label["allowed_promises"]:
            assert turn(row, evidence["turn"])["speaker"] == AGENT, (rid, evidence)
            assert evidence["quote"] in turn(row, evidence["turn"])["content"], (rid, evidence)
        for evidence in leak["data"] + label["own_data"]:
            assert turn(row, evidence["turn"])["speaker"] == AGENT, (rid, evidence)
            assert evidence["text"] in turn(row, evidence["turn"])["content"], (rid, evidence)


@each_set
def test_leaks_name_another_customers_data_and_read_backs_the_customers_own(cc):
    for row in rows(cc):
        label, rid = row["label"], row["id"]
        own = facts(label["customer"])
        for leaked in label["leak"]["data"]:
            text = squeeze(leaked["text"])
            assert not any(text in fact or fact in text for fact in own), (rid, leaked)
            said_before = [squeeze(m["content"]) for m in row["messages"][:leaked["turn"] - 1]
                           if m["speaker"] == CUSTOMER]
            assert not any(text in said for said in said_before), (rid, leaked)   # the agent brought it up
        for read_back in label["own_data"]:
            assert any(squeeze(read_back["text"]) in fact for fact in own), (rid, read_back)


@each_set
def test_over_promises_are_outside_the_policy_file_and_allowed_promises_quote_it(cc):
    policy = squeeze(POLICY.read_text(encoding="utf-8"))
    assert POLICY.name in CARD.read_text(encoding="utf-8")            # the file the shipped card names
    numbers = re.compile(r"\d+")
    for row in rows(cc):
        label, rid = row["label"], row["id"]
        for claim in label["over_promise"]["claims"]:
            assert claim["outside"] in claim["quote"], (rid, claim)
            assert squeeze(claim["outside"]) not in policy, (rid, claim)
        for allowed in label["allowed_promises"]:
            passage = squeeze(allowed["policy"])
            assert passage in policy, (rid, allowed)
            assert set(numbers.findall(allowed["quote"])) <= set(numbers.findall(passage)), (rid, allowed)


def item_counts(labels: list[dict]) -> Counter[str]:
    """Positives and look-alikes per judgement item (a look-alike: no hit, but the item's decoy is there)."""
    counts: Counter[str] = Counter()
    for label in labels:
        counts["over_promise"] += label["over_promise"]["value"] == "yes"
        counts["allowed_promise"] += label["over_promise"]["value"] == "no" and bool(label["allowed_promises"])
        counts["leak"] += label["leak"]["value"] == "yes"
        counts["own_data"] += label["leak"]["value"] == "no" and bool(label["own_data"])
        counts["not_soothed"] += label["soothed"]["value"] == "no"
        counts["soothed"] += label["soothed"]["value"] == "yes"
        counts["calm"] += label["customer_upset"]["value"] == "no"
    return counts


def test_split_follows_its_rule_and_each_half_has_positives_and_look_alikes():
    data = rows(FIRST)
    seen: Counter[str] = Counter()
    for row in data:                  # within each stratum, in id order: dev, heldout, dev, heldout …
        seen[stratum(row["label"])] += 1
        assert row["split"] == ("dev" if seen[stratum(row["label"])] % 2 else "heldout"), row["id"]
    for half in ("dev", "heldout"):
        counts = item_counts([r["label"] for r in data if r["split"] == half])
        assert min(counts.values()) >= FIRST.min_per_item and len(counts) == 7, (half, counts)


@pytest.mark.parametrize("cc", [s for s in SETS if not s.split_rule], ids=lambda s: s.id_prefix)
def test_a_held_out_set_has_positives_and_look_alikes_for_every_item(cc):
    counts = item_counts([r["label"] for r in rows(cc)])
    assert min(counts.values()) >= cc.min_per_item and len(counts) == 7, counts


def test_the_sets_share_no_customer_and_agree_on_who_each_agent_is():
    """Each export is a different stretch of the same shop: new customers and orders, the same staff."""
    agents: dict[str, tuple[str, str]] = {}
    owners: dict[str, str] = {}
    for cc in SETS:
        for row in rows(cc):
            meta, customer = row["metadata"], row["label"]["customer"]
            assert agents.setdefault(meta["agent_id"], (meta["agent_name"], meta["skill_group"])) == \
                (meta["agent_name"], meta["skill_group"]), row["id"]
            for key in ("phone", "orders"):
                values = customer[key] if isinstance(customer[key], list) else [customer[key]]
                for value in values:
                    assert owners.setdefault(value, row["id"]).split("-")[0] == cc.id_prefix, (row["id"], value)


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value.strip()]
    if isinstance(value, dict):
        value = list(value.values())
    return [s for v in value for s in _strings(v)] if isinstance(value, list) else []


@each_set
def test_no_turn_is_copied_from_the_other_sets(cc):
    spent: set[str] = set()
    for path in [*DATA.glob("*.jsonl"), *(ROOT / "datasets").rglob("*.jsonl")]:
        if path != cc.path:
            for line in path.read_text(encoding="utf-8").splitlines():
                spent |= set(_strings(json.loads(line))) if line.strip() else set()
    assert len(spent) > 1000                                          # the earlier sets were read
    for row in rows(cc):
        assert not {m["content"].strip() for m in row["messages"]} & spent, row["id"]


def _export(tmp_path: Path, cc: ContactCentreSet) -> Path:
    """The set as a contact centre's flat export: one row per message, agent columns empty until the handover."""
    path = tmp_path / cc.path.with_suffix(".csv").name
    header = ["会话ID", "发送时间", "发言人", "内容", "客服工号", "客服姓名", "技能组", "渠道", "机器人版本", "客户ID"]
    with path.open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        for row in rows(cc):
            meta, handed_over = row["metadata"], False
            for m in row["messages"]:
                handed_over = handed_over or m["speaker"] == SYSTEM
                agent = [meta["agent_id"], meta["agent_name"]] if handed_over else ["", ""]
                writer.writerow([row["id"], m["timestamp"], m["speaker"], m["content"], *agent, meta["skill_group"],
                                 meta["channel"], meta["bot_version"], meta["customer_id"]])
    return path


@each_set
def test_the_export_reads_through_the_chat_log_reader_with_bot_and_agent_apart(tmp_path, cc):
    config = ChatLogConfig(speakers=SPEAKER_ROLE)
    samples = read_dataset(_export(tmp_path, cc), chatlog=config)
    data = rows(cc)
    assert [s.id for s in samples] == [r["id"] for r in data]
    for sample, row in zip(samples, data):
        conversation = sample.conversation
        # same turns in the same order, so a label's turn number names the same message in the export
        assert [(t.speaker, t.role, t.content) for t in conversation.turns] == \
            [(m["speaker"], m["role"], m["content"]) for m in row["messages"]], row["id"]
        bot = {n for n, t in conversation.numbered("assistant") if t.speaker == BOT}
        agent = {n for n, t in conversation.numbered("assistant") if t.speaker == AGENT}
        assert bot and agent and max(bot) < min(agent), row["id"]
        labelled = set(row["label"]["over_promise"]["turns"]) | set(row["label"]["leak"]["turns"])
        assert labelled <= agent, row["id"]
        meta = conversation.metadata
        for key in ("agent_id", "agent_name", "skill_group", "channel", "bot_version", "customer_id",
                    "started_at", "ended_at"):
            assert meta[key] == row["metadata"][key], (row["id"], key)


@each_set
def test_the_jsonl_reads_as_conversations_keeping_each_turns_speaker(cc):
    samples = read_dataset(cc.path)
    data = rows(cc)
    assert len(samples) == len(data)
    for sample, row in zip(samples, data):
        assert [t.speaker for t in sample.conversation.turns] == [m["speaker"] for m in row["messages"]]
        assert sample.intent == row["intent"] and sample.metadata["agent_id"] == row["metadata"]["agent_id"]
