"""The writer's lock: atomic acquisition and takeover (no double holders in races of threads and
processes), --break-lock never breaks a live holder, a malformed lock file is reported and breakable."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest
from clitools import bounded
from progresstools import HANG_SECONDS

from tablegen.errors import StoreError
from tablegen.store.lock import LOCK_SUFFIX, StoreLock

DEAD_PID = 2**22 + 12345  # above the default pid_max of 4,194,304: never a live process


def _stale_record(path: str) -> None:
    with open(path, "w") as f:
        json.dump({"token": "old", "host": socket.gethostname(), "pid": DEAD_PID, "started": "then"}, f)


def _race(url: str, contenders: int, hold: threading.Lock, state: dict, barrier: threading.Barrier) -> None:
    barrier.wait()
    lock = StoreLock(url)
    try:
        lock.acquire()
    except StoreError:
        return
    with hold:
        state["holders"] += 1
        state["max"] = max(state["max"], state["holders"])
        state["wins"] += 1
    time.sleep(0.0002)
    with hold:
        state["holders"] -= 1
    lock.release()


@pytest.mark.parametrize("trials", [pytest.param(150, id="150"), pytest.param(1000, id="1000", marks=pytest.mark.slow)])
def test_no_two_threads_ever_hold_the_lock_at_once(tmp_path, trials, caplog):
    """Each trial: four threads released together at a free lock, a dead process's lock or a garbage one."""
    url = str(tmp_path / "race.zarr")
    for trial in range(trials):
        start = trial % 3
        if start == 1:
            _stale_record(url + LOCK_SUFFIX)
        elif start == 2:
            with open(url + LOCK_SUFFIX, "wb") as f:
                f.write(b"\x00garbage{")
        state, hold, barrier = {"holders": 0, "max": 0, "wins": 0}, threading.Lock(), threading.Barrier(4)
        threads = [threading.Thread(target=_race, args=(url, 4, hold, state, barrier)) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=HANG_SECONDS)
        assert not any(t.is_alive() for t in threads), f"trial {trial}: a contender hung"
        assert state["max"] == 1 and state["wins"] >= 1, f"trial {trial}: {state}"
        assert not os.path.exists(url + LOCK_SUFFIX)  # the last holder removed it


def _process_contender(url: str, trials: int, barrier, holders, maximum, wins) -> None:
    for _ in range(trials):
        barrier.wait(timeout=HANG_SECONDS)
        lock = StoreLock(url)
        try:
            lock.acquire()
        except StoreError:
            barrier.wait(timeout=HANG_SECONDS)
            continue
        with holders.get_lock():
            holders.value += 1
            maximum.value = max(maximum.value, holders.value)
            wins.value += 1
        time.sleep(0.0005)
        with holders.get_lock():
            holders.value -= 1
        lock.release()
        barrier.wait(timeout=HANG_SECONDS)


@pytest.mark.slow
def test_no_two_processes_ever_hold_the_lock_at_once(tmp_path):
    """Three processes contend 300 times (every tenth round over a dead process's lock)."""
    url, trials = str(tmp_path / "race.zarr"), 300
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(3)
    holders, maximum, wins = context.Value("i", 0), context.Value("i", 0), context.Value("i", 0)
    processes = [context.Process(target=_process_contender, args=(url, trials, barrier, holders, maximum, wins))
                 for _ in range(3)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=HANG_SECONDS)
    assert all(p.exitcode == 0 for p in processes)
    assert maximum.value == 1 and trials <= wins.value <= 3 * trials


def test_break_lock_refuses_a_holder_alive_on_this_host(tmp_path):
    url = str(tmp_path / "held.zarr")
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from tablegen.store.lock import StoreLock\n"
         f"with StoreLock({url!r}):\n    print('held', flush=True); time.sleep(120)"],
        stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(StoreError, match=rf"still alive \(pid {holder.pid} on {socket.gethostname()}.*never "
                                             "breaks a live run's lock"):
            StoreLock(url, break_lock=True).acquire()
        with pytest.raises(StoreError, match=rf"locked by another tablegen run \(pid {holder.pid}"):
            StoreLock(url).acquire()
    finally:
        os.killpg(holder.pid, signal.SIGKILL)
        holder.wait()
    with StoreLock(url):  # SIGKILL released the kernel lock: taken over without --break-lock
        record = json.loads(open(url + LOCK_SUFFIX).read())
        assert record["pid"] == os.getpid()


def test_malformed_lock_file_without_a_holder_is_reported_and_taken_over(tmp_path, caplog):
    url = str(tmp_path / "m.zarr")
    with open(url + LOCK_SUFFIX, "wb") as f:
        f.write(b"\xff\xfe not json")
    with StoreLock(url):
        pass
    assert "malformed record (not a JSON lock record" in caplog.text


def test_object_store_lock_reports_a_malformed_file_and_breaks_it_on_request():
    url = "memory://locktest/m.zarr"
    import fsspec

    fs = fsspec.filesystem("memory")
    fs.pipe("/locktest/m.zarr" + LOCK_SUFFIX, b"[1, 2")
    with pytest.raises(StoreError, match="lock record is malformed, not a JSON lock record.*--break-lock"):
        StoreLock(url).acquire()
    with StoreLock(url, break_lock=True):
        assert json.loads(fs.cat("/locktest/m.zarr" + LOCK_SUFFIX))["pid"] == os.getpid()
    assert not fs.exists("/locktest/m.zarr" + LOCK_SUFFIX)
    with StoreLock(url):  # a second writer is refused
        with pytest.raises(StoreError, match="locked by another tablegen run"):
            StoreLock(url).acquire()


def test_unwritable_lock_place_is_a_store_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(StoreError, match="cannot take the lock"):
        StoreLock(str(blocker / "s.zarr")).acquire()


# --- the lock belongs to the store, not to the path typed ----------------------------------------

def test_a_store_reached_through_a_symbolic_link_has_the_same_lock(tmp_path):
    store = tmp_path / "real.zarr"
    store.mkdir()
    link = tmp_path / "link.zarr"
    link.symlink_to(store)
    with StoreLock(str(store)):
        with pytest.raises(StoreError, match="locked by another tablegen run"):
            StoreLock(str(link)).acquire()
    with StoreLock(str(link)):  # and the other way round
        with pytest.raises(StoreError, match="locked by another tablegen run"):
            StoreLock(str(store)).acquire()


def test_deleting_the_lock_file_under_a_live_holder_lets_no_second_writer_in(tmp_path):
    url = str(tmp_path / "s.zarr")
    with StoreLock(url):
        os.unlink(url + LOCK_SUFFIX)
        second = StoreLock(url)
        with pytest.raises(StoreError, match="being written by another tablegen run"):
            second.acquire()
        assert second.fd is None and second.folder_fd is None
    with StoreLock(url):  # free again once the holder is gone
        pass


def test_the_folder_made_for_the_lock_is_removed_when_left_empty_and_kept_otherwise(tmp_path):
    store = tmp_path / "s.zarr"
    with StoreLock(str(store)):
        assert store.is_dir()
    assert not store.exists()
    with StoreLock(str(store)):
        (store / "zarr.json").write_text("{}")
    assert (store / "zarr.json").exists()


def test_a_planted_lock_symlink_is_refused_and_its_target_left_alone(tmp_path):
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    url = str(tmp_path / "s.zarr")
    os.symlink(target, url + LOCK_SUFFIX)
    with pytest.raises(StoreError, match="is a symbolic link"):
        StoreLock(url).acquire()
    assert target.read_text() == "keep me"


def test_a_lock_linked_to_dev_zero_is_refused_at_once(tmp_path):
    url = str(tmp_path / "s.zarr")
    os.symlink("/dev/zero", url + LOCK_SUFFIX)
    with bounded(HANG_SECONDS), pytest.raises(StoreError, match="is a symbolic link"):  # not read without limit
        StoreLock(url).acquire()


def test_a_planted_creation_marker_symlink_is_replaced_not_written_through(tmp_path):
    from tablegen.store.zarr_store import CREATING_SUFFIX, StoreTemplate, create_store

    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    url = str(tmp_path / "s.zarr")
    os.symlink(target, url + CREATING_SUFFIX)
    template = StoreTemplate(("auc",), (0.01,), (10,), (20,), (40,), (0.1,), chunks=(1, 1))
    with StoreLock(url):
        create_store(template, url)
    assert target.read_text() == "keep me"
    assert not os.path.lexists(url + CREATING_SUFFIX)
