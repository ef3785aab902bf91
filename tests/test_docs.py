"""Specification of the documentation: README.md is a front page, the manual's pages in `docs/`
link to what exists, and the commands they show name scripts and flags that exist.

Read as text only: no script is imported or run, so this takes well under a second.

Which commands are checked. A command is a line of a fenced block (lines ending in a backslash
joined to the next) or an inline code span of the prose, cut at a shell comment (a word starting
with `#`), `&&`, `;` or `|`. In it:
- `python PATH.py ARGS`: when PATH starts with `scripts/` or `tests/` (this repository's
  programs), PATH must exist and every `--flag` of ARGS must be defined: its name, quoted
  (`'--name'` or `'name'`, as argparse, `FlagParser.add_boolean` and absl's `DEFINE_*` write
  it), in the program's source, in the repository modules it imports (`from models.side_by_side
  import inputs`: one level, read as text), or in `towers/flags.py` or `towers/evaluation/` (the
  flags every training and evaluation script shares); `--noNAME` is defined where NAME is
  (absl's negation). After a lone `--`, the words are what the launcher gives `python`
  (`launch_local_cluster.py ... -- scripts/train_cifar10_multi_gpu.py --max_steps 100`, or
  `-- -m towers.legacy tests/data/legacy/...`), checked in the same way.
- `python -m towers.legacy ARGS` and `towers-legacy ARGS`: the runner's own flags (those before
  the program, the first word ending in `.py`; all of them for `towers-legacy export`) must be
  defined in `towers/legacy/`, `towers/flags.py` or `towers/evaluation/`; the program is checked
  as above when its path starts with `scripts/` or `tests/`.
Any other path is a user's own program (`my_tf1_script.py`, `script.py`) or one of another
repository (`cifar10_main.py`, `official/mnist/mnist.py`, `$R/deeplab/train.py`), run from its
own folder: not checked.
"""
import glob
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, 'README.md')
PAGES = [README] + sorted(glob.glob(os.path.join(ROOT, 'docs', '*.md')))

FENCE = re.compile(r'^```[^\n]*\n(.*?)^```[ \t]*$', re.M | re.S)
INLINE_CODE = re.compile(r'`[^`]+`')
LINK = re.compile(r'!?\[[^\]]*\]\(([^)\s]+)\)')
PROGRAM_PATH = re.compile(r'^(scripts|tests)/[\w./-]+\.py$')
FLAG = re.compile(r'^--([A-Za-z_][\w-]*)(=.*)?$')
IMPORT_FROM = re.compile(
    r'^from[ \t]+((?:models|towers)(?:\.\w+)*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)', re.M)
IMPORT = re.compile(r'^import[ \t]+((?:models|towers)(?:\.\w+)*)', re.M)

FIRST_LINES = [
    '# towers',
    '',
    '```',
    'pip install -r requirements.txt && python scripts/train_cifar10_multi_gpu.py --num_gpus 4 '
    '--max_steps 1000',
    'pip install -r requirements-test.txt && python -m pytest -n 2 --dist loadfile tests',
    '```',
]


def _read(path):
    with open(path, encoding='utf-8') as f:
        return f.read()


def _relative(path):
    return os.path.relpath(path, ROOT)


def _prose(text):
    """The text with its fenced blocks blanked out (their lines kept, as empty lines)."""
    return FENCE.sub(lambda m: '\n' * m.group(0).count('\n'), text)


def _anchor(heading):
    """GitHub's anchor of a heading: lowercase, punctuation but `-` and `_` removed, spaces to
    `-`."""
    return re.sub(r'[^\w\- ]', '', heading.strip().lower()).replace(' ', '-')


def _anchors(path):
    anchors, seen = set(), {}
    for line in _prose(_read(path)).split('\n'):
        heading = re.match(r'#{1,6} (.*)', line)
        if heading:
            anchor = _anchor(heading.group(1))
            count = seen.get(anchor, 0)
            seen[anchor] = count + 1
            anchors.add(anchor if count == 0 else '%s-%d' % (anchor, count))
    return anchors


def _links(path):
    """The link targets of a page's prose (not of its code)."""
    return LINK.findall(INLINE_CODE.sub('', _prose(_read(path))))


def _commands(text):
    """Every command a page shows: a fenced block's lines (continuations joined), and its
    inline code spans, each cut into words at its comment, `&&`, `;` and `|`."""
    pieces = []
    for block in FENCE.findall(text):
        pieces.extend(re.sub(r'\\\n', ' ', block).split('\n'))
    pieces.extend(span.strip('`').replace('\n', ' ')
                  for span in INLINE_CODE.findall(_prose(text)))
    commands = []
    for piece in pieces:
        words = []
        for word in piece.split():
            if word.startswith('#'):
                break
            if word in ('&&', ';', '|', '||'):
                commands.append(words)
                words = []
            else:
                words.append(word)
        commands.append(words)
    return [words for words in commands if words]


def _runs(words):
    """(program, the words given to it) for each program a command runs; the legacy runner's
    own words as ('towers.legacy', words)."""
    runs, i = [], 0
    while i < len(words):
        if words[i] == 'towers-legacy':
            i = _runner(words, i + 1, runs)
        elif words[i] in ('python', 'python3'):
            i = _python(words, i + 1, runs)
        else:
            i += 1
    return runs


def _python(words, i, runs):
    """What `python` runs with `words[i:]`: the runner, a program, or neither (`-m pytest`)."""
    if words[i:i + 2] == ['-m', 'towers.legacy']:
        return _runner(words, i + 2, runs)
    if i < len(words) and words[i].endswith('.py'):
        return _program(words, i, runs)
    return i + 1


def _runner(words, i, runs):
    """The runner's words up to its program (the first word ending in `.py`, or the module
    after `-m`), then that."""
    start = i
    while i < len(words) and not words[i].endswith('.py') and words[i] != '-m':
        i += 1
    runs.append(('towers.legacy', words[start:i]))
    if i < len(words) and words[i] == '-m':
        i += 1
    return _program(words, i, runs) if i < len(words) else i


def _program(words, i, runs):
    """The program at `words[i]` and its words, up to a lone `--` after which the launcher's
    words for `python` name another (a path, or `-m towers.legacy ...`)."""
    program, start = words[i], i + 1
    for j in range(start, len(words) - 1):
        if words[j] == '--' and (words[j + 1].endswith('.py') or words[j + 1] == '-m'):
            runs.append((program, words[start:j]))
            return _python(words, j + 1, runs)
    runs.append((program, words[start:]))
    return len(words)


def _module_files(module, names):
    """The files of a repository module and of the names imported from it."""
    base = os.path.join(ROOT, *module.split('.'))
    candidates = [base + '.py', os.path.join(base, '__init__.py')]
    for name in names:
        candidates += [os.path.join(base, name + '.py'), os.path.join(base, name, '__init__.py')]
    return [path for path in candidates if os.path.isfile(path)]


def _imported_sources(source):
    """The text of the repository modules (`models.*`, `towers.*`) that `source` imports."""
    files = []
    for module, names in IMPORT_FROM.findall(source):
        files += _module_files(module, re.findall(r'\w+', names))
    for module in IMPORT.findall(source):
        files += _module_files(module, [])
    return '\n'.join(_read(path) for path in sorted(set(files)))


def _sources(*patterns):
    return '\n'.join(_read(path) for pattern in patterns
                     for path in sorted(glob.glob(os.path.join(ROOT, pattern), recursive=True)))


def _undefined(flags, source):
    """The `--flags` whose names the source does not define."""
    missing = []
    for word in flags:
        flag = FLAG.match(word)
        if not flag:
            continue
        name = flag.group(1)
        names = [name] + ([name[2:]] if name.startswith('no') else [])
        if not any(quote + prefix + candidate + quote in source for candidate in names
                   for quote in ('"', "'") for prefix in ('', '--')):
            missing.append(word.split('=')[0])
    return missing


def test_the_readme_is_a_front_page_that_starts_with_the_two_commands():
    lines = _read(README).split('\n')
    assert len(lines) < 250, 'README.md has %d lines' % len(lines)
    assert lines[:len(FIRST_LINES)] == FIRST_LINES


def test_every_docs_page_has_a_title_and_a_link_from_the_readme():
    linked = {os.path.normpath(os.path.join(ROOT, target.split('#')[0]))
              for target in _links(README)}
    for page in PAGES[1:]:
        assert _read(page).startswith('# '), '%s does not start with a title' % _relative(page)
        assert page in linked, 'README.md does not link to %s' % _relative(page)


def test_every_relative_link_names_a_file_and_a_heading_that_exist():
    broken = []
    for page in PAGES:
        for target in _links(page):
            if re.match(r'[a-z]+:', target):
                continue                      # https:, mailto:
            path, _, anchor = target.partition('#')
            linked = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            if not os.path.exists(linked):
                broken.append('%s: %s (no such file)' % (_relative(page), target))
            elif anchor and (not linked.endswith('.md') or anchor not in _anchors(linked)):
                broken.append('%s: %s (no such heading)' % (_relative(page), target))
    assert not broken


def test_every_command_names_a_program_and_flags_that_exist():
    shared = _sources('towers/flags.py', 'towers/evaluation/*.py')
    runner = _sources('towers/legacy/**/*.py') + shared
    wrong = []
    for page in PAGES:
        for words in _commands(_read(page)):
            for program, flags in _runs(words):
                if program == 'towers.legacy':
                    source = runner
                elif PROGRAM_PATH.match(program):
                    path = os.path.join(ROOT, program)
                    if not os.path.isfile(path):
                        wrong.append('%s: %s does not exist' % (_relative(page), program))
                        continue
                    source = _read(path)
                    source += _imported_sources(source) + shared
                else:
                    continue                  # a user's program, or another repository's
                wrong.extend('%s: %s %s is not defined' % (_relative(page), program, flag)
                             for flag in _undefined(flags, source))
    assert not wrong


def test_the_commands_of_the_pages_are_found_to_be_checked():
    runs = [program for page in PAGES for words in _commands(_read(page))
            for program, _ in _runs(words)]
    assert 'scripts/train_cifar10_multi_gpu.py' in runs
    assert 'scripts/launch_local_cluster.py' in runs and 'towers.legacy' in runs
    assert 'tests/data/legacy/tower_program.py' in runs
