"""Specification of a long loop's progress: tqdm's bar on a terminal, a periodic `progress:` line
elsewhere, with the count out of the total, the rate and the time left."""
import io
import re

from towers import bars


class Clock:
    """Seconds that pass only when a test says so."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


class Terminal(io.StringIO):
    def isatty(self):
        return True


def lines_of(loop, seconds_per_item, clock):
    """Goes through `loop`, each item `seconds_per_item` long on `clock`."""
    for _ in loop:
        clock.now += seconds_per_item


def test_off_a_terminal_a_line_says_the_count_of_the_total_the_rate_and_the_time_left():
    stream, clock = io.StringIO(), Clock()
    lines_of(bars.bar(range(10), 'evaluation', 'batches', stream=stream, interval=2,
                      clock=clock), 0.5, clock)
    assert stream.getvalue().splitlines() == [
        'progress: evaluation 4/10 batches (40%), 2.00 batches/sec, 00:03 left',
        'progress: evaluation 8/10 batches (80%), 2.00 batches/sec, 00:01 left',
        'progress: evaluation 10/10 batches (100%), 2.00 batches/sec, 00:00 left']


def test_no_line_comes_before_the_interval_and_one_comes_at_the_end():
    stream, clock = io.StringIO(), Clock()
    lines_of(bars.bar(range(4), 'regression', 'runs', stream=stream, interval=30, clock=clock),
             5.0, clock)
    assert stream.getvalue().splitlines() == [
        'progress: regression 4/4 runs (100%), 0.20 runs/sec, 00:00 left']


def test_without_a_total_a_line_says_the_count_and_the_rate_alone():
    stream, clock = io.StringIO(), Clock()
    lines_of(bars.bar((item for item in range(5)), 'reading', 'files', stream=stream,
                      interval=1, clock=clock), 0.5, clock)
    assert stream.getvalue().splitlines() == ['progress: reading 2 files, 2.00 files/sec',
                                              'progress: reading 4 files, 2.00 files/sec',
                                              'progress: reading 5 files, 2.00 files/sec']


def test_a_total_updated_by_hand_counts_each_update():
    stream, clock = io.StringIO(), Clock()
    with bars.bar(3, 'export', 'stages', stream=stream, clock=clock) as progress:
        for _ in range(3):
            clock.now += 4.0
            progress.update()
    assert stream.getvalue().splitlines() == [
        'progress: export 3/3 stages (100%), 0.25 stages/sec, 00:00 left']


def test_an_iterator_without_len_takes_the_total_given():
    stream, clock = io.StringIO(), Clock()
    lines_of(bars.bar(iter(range(6)), 'precise batch-norm statistics', 'batches', total=6,
                      stream=stream, interval=2, clock=clock), 1.0, clock)
    assert stream.getvalue().splitlines()[0] == (
        'progress: precise batch-norm statistics 2/6 batches (33%), 1.00 batches/sec, '
        '00:04 left')


def test_on_a_terminal_it_is_tqdms_bar_with_the_time_left():
    terminal = Terminal()
    assert list(bars.bar(range(3), 'evaluation', 'batches', stream=terminal)) == [0, 1, 2]
    shown = terminal.getvalue()
    assert '\r' in shown and 'progress:' not in shown
    assert re.search(r'evaluation: 100%\|#+\| 3/3 \[\d\d:\d\d<\d\d:\d\d, ', shown), shown


def test_a_loop_of_one_item_shows_nothing():
    stream, terminal = io.StringIO(), Terminal()
    assert list(bars.bar(['only'], 'evaluation', 'batches', stream=stream)) == ['only']
    assert list(bars.bar(iter(['only']), 'reading', 'files', stream=stream)) == ['only']
    assert list(bars.bar(['only'], 'evaluation', 'batches', stream=terminal)) == ['only']
    assert stream.getvalue() == terminal.getvalue() == ''


def test_it_goes_to_stderr_and_a_written_line_to_stdout(capsys):
    for _ in bars.bar(range(2), 'regression', 'runs'):
        bars.write('a run')
    out, err = capsys.readouterr()
    assert out == 'a run\na run\n'
    assert re.fullmatch(r'progress: regression 2/2 runs \(100%\), \d+\.\d\d runs/sec, '
                        r'00:00 left\n', err), err
