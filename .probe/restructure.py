"""Restructure CHANGELOG.md into Keep-a-Changelog release sections (one-off, issue 38 item 5)."""
import re
from pathlib import Path

path = Path("/work/wt-i38-misc/CHANGELOG.md")
lines = Path("/tmp/x/CHANGELOG.orig.md").read_text().splitlines()
assert lines[0] == "# Changelog"
i = next(k for k, l in enumerate(lines) if l.startswith("### "))
intro = "\n".join(lines[3:i]).strip()

sections = []  # (title, body lines)
for l in lines[i:]:
    if l.startswith("### "):
        sections.append([l[4:].strip(), []])
    else:
        sections[-1][1].append(l)


def blocks(body):
    """Bullets, paragraphs and tables (a paragraph followed by a table stays with it)."""
    out, cur = [], []
    def flush():
        if cur:
            out.append("\n".join(cur).rstrip())
            cur.clear()
    prev_kind = None
    for l in body:
        if not l.strip():
            if cur and cur[-1].startswith("|"):
                flush()
            elif cur and not cur[0].startswith("- "):
                # paragraph ended: keep it open if a table follows (decided at the table)
                cur.append("")
            else:
                flush()
            continue
        if l.startswith("- "):
            if cur and cur[-1] == "":
                cur.pop()
            flush()
            cur.append(l)
        elif l.startswith("|"):
            if cur and cur[0].startswith("- ") and not cur[-1].startswith("|"):
                flush()
            if cur and cur[-1] == "":
                cur.pop()
            cur.append(l)
        elif l.startswith("  ") and cur and cur[0].startswith("- "):
            cur.append(l)
        else:
            if cur and cur[-1] == "":
                cur.pop()
                if cur and not cur[-1].startswith("|"):
                    flush()
            if cur and (cur[0].startswith("- ") or cur[-1].startswith("|")):
                flush()
            cur.append(l)
    if cur and cur[-1] == "":
        cur.pop()
    flush()
    return [b for b in out if b.strip()]


FIXED_TITLES = {"Fixed", "Sweep leftovers", "The sweep's leftovers", "The documents tell the truth"}
ADDED_TITLES = {"New", "Documentation"}
CHANGED_TITLES = {"Layout", "Renamed functions and options", "Renamed result variables and dims",
                  "Changed defaults (see the defaults table of docs/conventions.md)",
                  "Changed numbers (same distributions, new random streams)"}
FIX_RE = re.compile(r"\b(crash(ed|es)?|silently|was wrong|were wrong|wrongly|Fix(ed)?\b|"
                    r"raised (a )?(TypeError|KeyError|IndexError|AttributeError)|it said|it read|"
                    r"it took|it gave|it returned|leaked|was ignored|were ignored|no longer|runs again)")
ADD_RE = re.compile(r"^(- )?(New\b|A new\b|An? (documentation|new)|`notebooks/|Notebook|Test tiers|"
                    r"ruff|A documentation|`uqviz\.\w+` \(|Glossary|CONTRIBUTING)")


def title_of(t):
    t = re.sub(r"\s*\((issue|issues)\b[^()]*(\([^()]*\)[^()]*)*\)", "", t).strip()
    return t.rstrip(".:")


def category(title, block):
    if "FutureWarning" in block and re.search(r"renam|deprecat|until (uqviz )?0\.3\.0", block):
        return "Deprecated"
    if title in FIXED_TITLES:
        return "Fixed"
    if title in ADDED_TITLES:
        return "Added"
    if title in CHANGED_TITLES:
        return "Changed"
    if ADD_RE.search(block.splitlines()[0]):
        return "Added"
    if FIX_RE.search(block):
        return "Fixed"
    if re.search(r"\b(new|adds?|gains?)\b", block.splitlines()[0]) and title.startswith(
            ("Comparing models", "Coverage across groups", "Adversarial", "LZV", "Notebook",
             "Scores of the forecast", "The forecast as given", "Distribution recalibration",
             "Report and CI gate", "Explorers draw SVG", "Typed warnings", "long_name",
             "uqviz without numba", "The dashboard measured")):
        return "Added"
    return "Changed"


ORDER = ("Added", "Changed", "Deprecated", "Removed", "Fixed")


def entry(title, block, generic):
    """One bullet: the topic in bold (unless the section is a generic category), the block."""
    lead = "" if generic else f"**{title}.** "
    if block.startswith("- "):
        first, *rest = block.splitlines()
        return "\n".join([f"- {lead}{first[2:]}", *rest])
    text_lines, table = [], []
    for l in block.splitlines():
        (table if l.startswith("|") else text_lines).append(l)
    bullet = ["- " + lead + (text_lines[0] if text_lines else "")] + \
        ["  " + l if l else "" for l in text_lines[1:]]
    out = "\n".join(bullet)
    if table:
        out += "\n\n" + "\n".join(table) + "\n"
    return out


import textwrap


def rewrap(e):
    """A bullet without a table re-filled to 100 characters (continuation indented by 2)."""
    if "\n|" in e or "```" in e:
        return e
    text = " ".join(l.strip() for l in e.splitlines())
    return textwrap.fill(text, width=100, subsequent_indent="  ", break_long_words=False,
                         break_on_hyphens=False)


def release(secs):
    cats = {c: [] for c in ORDER}
    for title, body in secs:
        t = title_of(title)
        generic = t in ADDED_TITLES | FIXED_TITLES | {"The house, third pass, first part"}
        for b in blocks(body):
            cats[category(t, b)].append(entry(t, b, generic))
    out = []
    for c in ORDER:
        if cats[c]:
            out.append(f"### {c}\n")
            for e in cats[c]:
                out.append(rewrap(e))
            out.append("")
    return "\n".join(out)


unreleased = [s for s in sections if "issue 38" in s[0]]
v020 = [s for s in sections if "issue 38" not in s[0]]
src_blocks = sum(len(blocks(b)) for _, b in sections)

HEAD = """# Changelog

All notable changes to uqviz, by release, newest first, in the format of
[Keep a Changelog](https://keepachangelog.com/en/1.1.0/); uqviz 0.x follows
[semantic versioning](https://semver.org/) with 0.x minor releases that may rename (a renamed
option keeps its old keyword one release, with a `FutureWarning`). Each entry says what changed for
a user; the issue that asked for it is in the git log. Add one line under the right heading of
**[Unreleased]** (Added, Changed, Deprecated, Removed, Fixed).

## [Unreleased]

The house, third pass (issue 38): the report as data, one options object per family, one meaning
per option name, optional numba, dask and h5py.

"""

V020 = f"""## [0.2.0] - unreleased (main up to issue 37; `uqviz.__version__` still reads 0.1.0)

One contract for the whole API. {intro}

"""

V010 = """## [0.1.0] - 2026-11-23

The first issues: the package as first built.

### Added
- Average calibration: `validate_average` (ZMS, RCE, ZM, ZVar, NLL, CC with BCa intervals of a
  numba bootstrap of resampled sums), the statistics registry (`register_statistic`) and the
  tailedness screen (`tailedness`, Pernot (2024b)); the `uqviz` command line.
- Conditional calibration: binning schemes, `local_calibration` (grouped BCa per bin),
  `fraction_valid`, `acf`, `binned_errors` (ENCE, UCE, ZMSE), `running_statistics`,
  `ordering_study`, `reliability`.
- Simulated references: generative distributions, `simulated_reference`, `validate_simulated`
  (Sim, Sim2), `validate`, `size_dependence`, `extrapolate`, `confidence_curve`.
- Distribution fits, decimation curves, the Monte Carlo experiments (`statistic_bias`,
  `validation_probability`), quantile calibration (`qce`, `nees`), recalibration
  (`fit_recalibration`, `recalibrate`: scaling, linear, BVS, isotonic), interval coverage,
  calibration curves and proper scores.
- `report` (HTML and JSON, `uqviz report`), the figures of `uqviz.plots`, the explorers of
  `uqviz.widgets` and the Voila dashboard, the course notebooks with Binder, fidelity tests
  against the published tables of Pernot (2024), browser tests in headless Chromium.
"""

new = HEAD + release(unreleased) + "\n" + V020 + release(v020) + "\n" + V010
new = re.sub(r"\n{3,}", "\n\n", new)
path.write_text(new)
print("blocks", src_blocks)
