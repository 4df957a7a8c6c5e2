#!/usr/bin/python3
"""fakelogind.py — a small stand-in for systemd-logind on a private D-Bus bus, for the graceful
node shutdown test (tests/e2e/test_shutdown.sh).

It owns org.freedesktop.login1 on the bus given by --address and serves what the kubelet's
node shutdown manager uses of org.freedesktop.login1.Manager at /org/freedesktop/login1:
  Inhibit(what, who, why, mode) -> h   a lock: the write end of a pipe; the lock is held until
                                       every copy of it is closed (logind uses a FIFO the same
                                       way)
  property InhibitDelayMaxUSec (t)     --delay-sec, through org.freedesktop.DBus.Properties.Get
  signal PrepareForShutdown(b)         SIGUSR1 emits true, SIGUSR2 false
Each event goes to --log as one line: "TIME inhibit N who=... what=... mode=...",
"TIME released N after S", "TIME signal true|false", with TIME in Unix seconds (float).
Writes "ready" to --ready-file once it owns its name. SIGTERM stops it.
Needs Debian's python3-dbus and python3-gi.
"""
import argparse
import os
import signal
import sys
import time

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

IFACE = "org.freedesktop.login1.Manager"
PATH = "/org/freedesktop/login1"


class Manager(dbus.service.Object):
    def __init__(self, bus, delay_usec, log):
        super().__init__(bus, PATH)
        self.delay_usec = delay_usec
        self.log = log
        self.n = 0

    def note(self, line):
        with open(self.log, "a") as f:
            f.write("%.3f %s\n" % (time.time(), line))

    @dbus.service.method(IFACE, in_signature="ssss", out_signature="h")
    def Inhibit(self, what, who, why, mode):
        if what != "shutdown" or mode not in ("delay", "block"):
            raise dbus.exceptions.DBusException(
                "only shutdown locks here", name="org.freedesktop.DBus.Error.InvalidArgs")
        self.n += 1
        n, taken = self.n, time.time()
        r, w = os.pipe()
        self.note("inhibit %d who=%s what=%s mode=%s why=%s" % (n, who, what, mode, why))

        def released(fd, cond):
            os.close(fd)
            self.note("released %d after %.1f" % (n, time.time() - taken))
            return False
        GLib.io_add_watch(r, GLib.PRIORITY_DEFAULT, GLib.IO_HUP | GLib.IO_ERR, released)
        fd = dbus.types.UnixFd(w)  # a copy, sent with the reply and closed after it
        os.close(w)
        return fd

    @dbus.service.method(dbus.PROPERTIES_IFACE, in_signature="ss", out_signature="v")
    def Get(self, iface, prop):
        if iface == IFACE and prop == "InhibitDelayMaxUSec":
            return dbus.UInt64(self.delay_usec)
        raise dbus.exceptions.DBusException(
            "no property %s.%s" % (iface, prop),
            name="org.freedesktop.DBus.Error.UnknownProperty")

    @dbus.service.signal(IFACE, signature="b")
    def PrepareForShutdown(self, active):
        self.note("signal %s" % ("true" if active else "false"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--address", required=True)
    ap.add_argument("--delay-sec", type=float, default=30)
    ap.add_argument("--log", required=True)
    ap.add_argument("--ready-file")
    a = ap.parse_args()
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.bus.BusConnection(a.address)
    name = dbus.service.BusName("org.freedesktop.login1", bus)
    m = Manager(bus, int(a.delay_sec * 1e6), a.log)
    loop = GLib.MainLoop()
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGUSR1,
                         lambda: m.PrepareForShutdown(True) or True)
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGUSR2,
                         lambda: m.PrepareForShutdown(False) or True)
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, lambda: loop.quit() or False)
    if a.ready_file:
        with open(a.ready_file, "w") as f:
            f.write("ready\n")
    loop.run()
    del name
    return 0


if __name__ == "__main__":
    sys.exit(main())
