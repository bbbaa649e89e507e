"""What the public pages draw from a startup's detail data (the serializer's output, so the
pages show exactly what the API serves): the revenue chart, the embeddable badge and the
Markdown twin. Plain functions over dicts; no queries."""

from dataclasses import dataclass

from django.utils.html import escape as html_escape

from core.escaping import markdown_text, markdown_url, xml_text
from core.formats import usd_text

CHART_WIDTH, CHART_HEIGHT = 640, 220
CHART_TOP, CHART_BOTTOM, CHART_LEFT = 30, 34, 8
CHART_MONTHS = 24  # the most recent months drawn; the table under the chart lists them all


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    month: str
    net: int
    label: str  # the month written under the bar ("Oct ’25"), or "" (every few, never overlapping)
    minor: bool  # a label phones hide (half of them), so the rest stay readable at 390 px
    label_x: float
    anchor: str  # text-anchor: the first and last labels stay inside the chart


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    bars: list[Bar]
    peak: int
    baseline: float
    peak_y: float
    first_month: str
    last_month: str


def revenue_chart(monthly: list[dict]) -> Chart | None:
    """Bars of net revenue per month (the last CHART_MONTHS), scaled to the highest month."""
    months = monthly[-CHART_MONTHS:]
    if not months:
        return None
    peak = max(max(row["net"] for row in months), 1)
    plot_height = CHART_HEIGHT - CHART_TOP - CHART_BOTTOM
    slot = (CHART_WIDTH - CHART_LEFT * 2) / len(months)
    every = max(1, -(-len(months) // 8))
    bars = []
    for index, row in enumerate(months):
        height = max(row["net"], 0) / peak * plot_height
        bars.append(
            Bar(
                x=round(CHART_LEFT + index * slot + slot * 0.15, 1),
                y=round(CHART_TOP + plot_height - height, 1),
                width=round(slot * 0.7, 1),
                height=round(height, 1),
                month=row["month"],
                net=row["net"],
                **_label(index, len(months), every, row["month"], slot),
            )
        )
    return Chart(
        width=CHART_WIDTH,
        height=CHART_HEIGHT,
        bars=bars,
        peak=peak,
        baseline=CHART_TOP + plot_height,
        peak_y=CHART_TOP,
        first_month=months[0]["month"],
        last_month=months[-1]["month"],
    )


MONTHS = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()


def _label(index: int, count: int, every: int, month: str, slot: float) -> dict:
    """Every `every`-th month from the newest is labelled, abbreviated ("Oct ’25"); every
    other label is minor. The first and last labels are anchored to the chart's edges."""
    back = count - 1 - index
    labelled = back % every == 0
    year, number = month.split("-")
    x = CHART_LEFT + index * slot + slot / 2
    anchor = "middle"
    if index == count - 1:
        x, anchor = CHART_WIDTH - CHART_LEFT, "end"
    elif index == 0:
        x, anchor = CHART_LEFT, "start"
    return {
        "label": f"{MONTHS[int(number) - 1]} ’{year[2:]}" if labelled else "",
        "minor": labelled and (back // every) % 2 == 1,
        "label_x": round(x, 1),
        "anchor": anchor,
    }


def badge_text(startup: dict) -> str:
    """The badge's value: verified MRR, or what kind of figure it is otherwise."""
    revenue, verification = startup["revenue"], startup["verification"]
    if verification and verification["provider"] == "demo":
        return "demo data"
    if revenue["verified"] and revenue["mrr"] is not None:
        return f"{usd_text(revenue['mrr'])} MRR verified"
    if revenue["verified"]:
        return "verified revenue"
    return "self-reported"


def badge_svg(startup: dict) -> str:
    """A shields-style SVG badge ('OpenStartup | $4,200 MRR verified'), self-contained."""
    label, value = "OpenStartup", badge_text(startup)
    # Verdana 11px averages about 7 px per character; generous so text never spills.
    label_width = 10 + 7 * len(label)
    value_width = 10 + 7 * len(value)
    width = label_width + value_width
    colour = "#19794a" if startup["revenue"]["verified"] else "#6b7280"
    if value == "demo data":
        colour = "#6b3fa0"
    # Attribute and text alike: the name is founder-typed (quotes escaped too). Presentation
    # attributes only, no style, so the badge renders under `default-src 'none'`.
    title = xml_text(f"{startup['name']}: {value}")
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="20" role="img" '
        f'aria-label="{title}"><title>{title}</title>'
        f'<rect width="{label_width}" height="20" fill="#374151"/>'
        f'<rect x="{label_width}" width="{value_width}" height="20" fill="{colour}"/>'
        '<g fill="#fff" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11" '
        'text-anchor="middle">'
        f'<text x="{label_width / 2}" y="14">{label}</text>'
        f'<text x="{label_width + value_width / 2}" y="14">{xml_text(value)}</text>'
        "</g></svg>"
    )


def badge_embed_html(startup: dict) -> str:
    """The HTML a founder copies to show the badge on their own site: the name escaped for the
    alt attribute (the profile page escapes this snippet again to show it as text)."""
    profile = html_escape(startup["profile_url"])
    alt = html_escape(f"{startup['name']} on OpenStartup")
    return f'<a href="{profile}"><img src="{profile}/badge.svg" alt="{alt}"></a>'


def _usd(value: int | None) -> str:
    return "unknown" if value is None else usd_text(value)


def startup_markdown(startup: dict) -> str:
    """The profile as Markdown for agents (what /llms.txt promises at /startups/{slug}.md)."""
    revenue, verification = startup["revenue"], startup["verification"]
    lines = [f"# {markdown_text(startup['name'])}", ""]
    if startup["description"]:
        lines += [markdown_text(startup["description"]), ""]
    facts = [
        ("Category", startup["category"]),
        ("Business type", startup["business_type"]),
        ("Country", startup["country"]),
        ("Founded", startup["founded"]),
        ("Team size", startup["team_size"]),
    ]
    lines += [
        f"- {name}: {markdown_text(value) if value is not None else 'unknown'}"
        for name, value in facts
    ]
    # A website that is not an http(s) URL is shown as inert text, never linked.
    website = startup["website"]
    website_text = markdown_url(website) or (markdown_text(website) if website else "unknown")
    lines.append(f"- Website: {website_text}")
    lines += [
        f"- MRR: {_usd(revenue['mrr'])} (USD)",
        f"- ARR: {_usd(revenue['arr'])} (USD)",
        "- Revenue source: "
        + (
            "demo data (invented figures, not from a payment provider)"
            if verification and verification["provider"] == "demo"
            else f"verified by {verification['provider']}, last sync {verification['verified_at']}"
            if verification
            else "self-reported by the founder (not verified)"
        ),
        "- On sale: "
        + (f"yes, asking {_usd(startup['asking_price'])}" if startup["on_sale"] else "no"),
        f"- Profile: {startup['profile_url']}",
        "",
    ]
    if startup["founders"]:
        lines += ["## Founders", ""]
        for founder in startup["founders"]:
            title = f", {markdown_text(founder['title'])}" if founder["title"] else ""
            links = [markdown_url(url) for url in (founder["twitter"], founder["linkedin"])]
            line = f"- {markdown_text(founder['name'])}{title}"
            lines.append(line + "".join(f" {link}" for link in links if link))
        lines.append("")
    if startup["socials"]:
        lines += ["## Links", ""]
        lines += [
            f"- {markdown_text(s['platform'])}: {markdown_url(s['url'])}"
            for s in startup["socials"]
            if markdown_url(s["url"])
        ]
        lines.append("")
    if verification and verification["monthly"]:
        lines += [
            "## Verified monthly revenue (USD, UTC months)",
            "",
            "| Month | Gross | Refunds | Net |",
            "|---|---|---|---|",
        ]
        lines += [
            f"| {m['month']} | {m['gross']} | {m['refunds']} | {m['net']} |"
            for m in verification["monthly"]
        ]
        lines.append("")
    lines.append(
        "Data from OpenStartup; credit the profile link above wherever you show it. "
        "Self-reported figures must never be presented as verified."
    )
    return "\n".join(lines) + "\n"
