"""How far a long loop is and how long it has left: a bar on a terminal, a line in a log.

    for batch in bars.bar(batches, 'evaluation', 'batches'):        # an iterator wrapper
        outputs.append(net.run(batch))
    with bars.bar(3, 'export', 'stages') as progress:               # a total, updated by hand
        restore(); progress.update()

Evaluation, precise batch-norm statistics, the benchmark's rounds, export, regression and
`towers-legacy --check` show their progress so. On a terminal (the stream's `isatty()`) it is
tqdm's bar, with the time left. Elsewhere (a log file, CI, a pipe) a bar's carriage returns
would pile up, so it is a line as the training's (`towers.training.progress`),

    progress: evaluation 120/400 batches (30%), 3.20 batches/sec, 01:27 left

at most every `LINE_SECONDS` and once at the end (the rate then the whole loop's); with no
known total, the count and the rate alone. tqdm counts, times and formats both: the rate, the
time left and its format are its own. Both go to stderr, so that what a script prints on stdout
stays as it was. A loop of one item shows nothing.
"""
import numbers
import sys

import tqdm

# The least time between two lines when the stream is no terminal.
LINE_SECONDS = 30.0
_COUNT = 'progress: {desc} {n_fmt}/{total_fmt} {unit} ({percentage:.0f}%)'
_UNKNOWN_COUNT = 'progress: {desc} {n_fmt} {unit}'
_RATE = ', {rate_noinv:.2f} {unit}/sec'
_LEFT = ', {remaining} left'


def bar(items, what, unit='it', total=None, stream=None, interval=LINE_SECONDS, clock=None):
    """A progress bar over `items`, or over a total updated by hand (see the module docstring).

    Args:
      items: an iterable to go through (its `len`, when it has one, is the total), a number
        (the total, for `update(n)` by hand), or None (no known total, updated by hand).
      what: the loop, as the line names it, e.g. 'evaluation'.
      unit: what an item is, plural, e.g. 'batches'.
      total: the number of items, when `items` is an iterable without a `len`, or None.
      stream: where it goes; sys.stderr (at the call) by default.
      interval: the least seconds between two lines when `stream` is no terminal.
      clock: seconds, `time.time` by default (a test's clock).

    Returns:
      A `tqdm.tqdm`: iterate over it, or use it as a context manager and call `update(n)`.
    """
    stream = sys.stderr if stream is None else stream
    if isinstance(items, numbers.Number):
        items, total = None, items
    elif total is None and hasattr(items, '__len__'):
        total = len(items)
    quiet = total is not None and total <= 1
    if getattr(stream, 'isatty', lambda: False)():
        return tqdm.tqdm(items, what, total, file=stream, unit=unit,
                         dynamic_ncols=True, disable=quiet)
    return _Lines(items, what, total, file=_Nowhere(), unit=unit, mininterval=interval,
                  miniters=1, disable=quiet, stream=stream, clock=clock)


def write(line, stream=None):
    """Prints `line` to `stream` (sys.stdout at the call by default) and flushes it: above a
    bar on the terminal, which tqdm then draws again; as `print` elsewhere."""
    stream = sys.stdout if stream is None else stream
    tqdm.tqdm.write(line, file=stream)
    stream.flush()


class _Nowhere:
    """The file tqdm writes its bar to when lines are shown instead."""

    def write(self, text):
        pass

    def flush(self):
        pass


class _Lines(tqdm.tqdm):
    """tqdm's count and timing of a loop, shown as a whole `progress:` line on `stream` at most
    every `mininterval` seconds (each update looks at the clock: `miniters=1`) and when it
    closes; no line before the first item (of no known total: the second), or twice for the
    same count."""

    # No thread refreshing the display between updates: a line is due only when one comes.
    monitor_interval = 0

    def __init__(self, *args, stream, clock=None, **kwargs):
        self._stream = stream
        self._shown = 0
        super().__init__(*args, **kwargs)
        if clock is not None and not self.disable:
            # What tqdm's own tests do to run a bar on their clock.
            self._time = clock
            self.start_t = self.last_print_t = clock()

    def display(self, msg=None, pos=None):
        if self.n == self._shown or (self.total is None and self.n < 2):
            return True
        self._shown = self.n
        meter = self.format_dict
        known = bool(self.total) and self.n <= self.total
        line = _COUNT if known else _UNKNOWN_COUNT
        if meter['rate'] or meter['elapsed']:
            line += _RATE + (_LEFT if known else '')
        print(self.format_meter(**dict(meter, bar_format=line)), file=self._stream,
              flush=True)
        return True
