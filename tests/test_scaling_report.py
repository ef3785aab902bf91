"""Specification of the scaling report: its figures, table, chart, and the command end to end."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import towers
from models import registry
from models.datasets.cifar10 import reader as cifar10_input
from towers.benchmarks import scaling

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PNG_SIGNATURE = b'\x89PNG\r\n\x1a\n'


def run_of(timed_steps, num_towers, step_secs, batch_size=512):
    """A `Run` whose steps took `step_secs`, timed by the training loop's timer."""
    timing = timed_steps(step_secs, batch_size * num_towers).summary()
    return scaling.Run(num_towers, batch_size * num_towers, timing)


def test_speedup_and_efficiency_are_at_the_median_against_the_fewest_towers(timed_steps):
    # 2 towers take 1.5x as long per step for twice the images: speed-up 4/3, efficiency 2/3.
    runs = [run_of(timed_steps, 1, [9.0, 1.0, 1.0, 1.0]),
            run_of(timed_steps, 2, [9.0, 1.5, 1.5, 1.5])]
    report = scaling.results_json(runs, 'm', 512, 'test devices')
    assert [r['speedup'] for r in report['runs']] == pytest.approx([1.0, 4 / 3])
    assert [r['efficiency'] for r in report['runs']] == pytest.approx([1.0, 2 / 3])
    assert report['runs'][1]['sum_step_sec'] == 13.5
    assert report['runs'][1]['step_secs'] == [9.0, 1.5, 1.5, 1.5]


def test_table_gives_the_reference_figures_beside_the_median_ones(timed_steps):
    table = scaling.format_markdown([run_of(timed_steps, 1, [2.0, 1.0, 1.0, 1.0]),
                                     run_of(timed_steps, 4, [4.0, 2.0, 2.0, 2.0])])
    lines = table.splitlines()
    assert lines[0].startswith('| towers | global batch | steps | total time (s) |')
    # Total 10 s, mean 2.5 s: 2048 / 2.5 = 819 images/sec; median 2 s: 1024.
    assert lines[3] == '| 4 | 2048 | 4 | 10.0 | 2.500 | 819 | 2.000 | 1024 | 2.00 | 0.50 |'


def test_chart_is_a_png(tmp_path, timed_steps):
    path = tmp_path / 'scaling.png'
    scaling.save_chart([run_of(timed_steps, 1, [1.0, 1.0]), run_of(timed_steps, 2, [1.2, 1.2])],
                       str(path), 'title')
    assert path.read_bytes()[:8] == PNG_SIGNATURE


def test_every_registered_model_is_measured_through_its_registry_entry(tmp_path):
    rs = np.random.RandomState(0)
    parts = [(rs.randint(0, 256, [4, 32, 32, 3]), rs.randint(0, 10, 4)) for _ in range(6)]
    cifar10_input.write_batches_dir(str(tmp_path / cifar10_input.BATCHES_DIR), parts[:5],
                                    parts[5])
    runs = scaling.measure(registry.get('cifar10'), [1], batch_size=2, steps=2,
                           data_dir=str(tmp_path), configure=towers.configure_devices)
    assert [(run.towers, run.global_batch, run.timing['steps']) for run in runs] == [(1, 2, 2)]


def test_report_on_one_and_two_towers_writes_its_table_json_and_chart(tmp_path):
    out_dir = tmp_path / 'report'
    result = subprocess.run(
        [sys.executable, os.path.join(REPO, 'scripts', 'scaling_report.py'), '--model',
         'fashion_mnist', '--num_gpus', '1,2', '--steps', '3', '--batch_size', '4',
         '--data_dir', str(tmp_path / 'data'), '--out_dir', str(out_dir)],
        cwd=REPO, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    table = (out_dir / 'scaling.md').read_text()
    assert [line.split(' | ')[:3] for line in table.splitlines()[2:]] == [
        ['| 1', '4', '3'], ['| 2', '8', '3']]
    assert table in result.stdout
    report = json.loads((out_dir / 'scaling.json').read_text())
    assert report['model'] == 'fashion_mnist' and report['steps'] == 3
    assert [len(run['step_secs']) for run in report['runs']] == [3, 3]
    assert (out_dir / 'scaling.png').read_bytes()[:8] == PNG_SIGNATURE
