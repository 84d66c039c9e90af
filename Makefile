# hal's install for any distribution: the same files the Debian package ships
# (Cargo.toml, [package.metadata.deb]), under PREFIX.
#
#   make                                      # cargo build --release --locked
#   sudo make install                         # PREFIX=/usr/local
#   sudo make install PREFIX=/usr             # the package's layout exactly
#   make install DESTDIR=/tmp/stage           # staged (for packagers); touches no systemd
#   sudo make uninstall                       # same PREFIX as the install
#   make deb                                  # cargo deb -> target/debian/hal_*.deb
#
# On the live system, install also makes /var/lib/hal the node's shared state
# (see SHARE_STATE); uninstall leaves it. The units' ExecStart is rewritten to $(BINDIR)/hal. Installing enables and
# starts nothing; on the live system (no DESTDIR) systemd is told to reload, and
# uninstall first stops and disables the system units, as the package does.

PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
DOCDIR ?= $(DATADIR)/doc/hal
SYSTEMDSYSTEMUNITDIR ?= $(PREFIX)/lib/systemd/system
SYSTEMDUSERUNITDIR ?= $(PREFIX)/lib/systemd/user
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
FISHCOMPDIR ?= $(DATADIR)/fish/vendor_completions.d
# Debian's zsh reads vendor-completions under /usr, site-functions under /usr/local;
# Arch and Fedora read /usr/share/zsh/site-functions (ZSHCOMPDIR=... to choose).
ifeq ($(PREFIX),/usr)
ZSHCOMPDIR ?= $(DATADIR)/zsh/vendor-completions
else
ZSHCOMPDIR ?= $(DATADIR)/zsh/site-functions
endif

CARGO ?= cargo
BIN ?= $(or $(CARGO_TARGET_DIR),target)/release/hal

UNITS := hal-watch.service hal-rescue.service hal-rescue.timer
MAN1 := $(notdir $(wildcard man/*.1))
MAN5 := $(notdir $(wildcard man/*.5))
DOCS := README.md CHANGELOG.md
# The guide README.md links to, placed as docs/ beside it.
GUIDE := $(notdir $(wildcard docs/*.md))

# The node's state (start counts, desired states), shared by root, its units and
# whoever may drive the system engine: setgid, owned by the engine socket's group
# (docker), group-writable; hal keeps it so on every write. dist/debian/postinst does the same.
STATEDIR := /var/lib/hal
SHARE_STATE = install -d -m 2775 $(STATEDIR) && \
	gid=$$(stat -c %g /var/run/docker.sock 2>/dev/null || true); \
	if [ -z "$$gid" ] || [ "$$gid" = 0 ]; then gid=$$(getent group docker | cut -d: -f3); fi; \
	if [ -n "$$gid" ]; then chgrp -R "$$gid" $(STATEDIR); fi; \
	find $(STATEDIR) -type d -exec chmod 2775 {} + && \
	find $(STATEDIR) -type f -exec chmod ug+rw,o+r {} +

# Whether this is the live system with systemd running (not a staged DESTDIR).
LIVE_SYSTEMD = [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]

.PHONY: all build install uninstall deb

all: build

build:
	$(CARGO) build --release --locked

# Built only when missing: `make` first after changing the sources.
$(BIN):
	$(CARGO) build --release --locked

install: $(BIN)
	install -d "$(DESTDIR)$(BINDIR)" "$(DESTDIR)$(MANDIR)/man1" "$(DESTDIR)$(MANDIR)/man5" \
		"$(DESTDIR)$(SYSTEMDSYSTEMUNITDIR)" "$(DESTDIR)$(SYSTEMDUSERUNITDIR)" \
		"$(DESTDIR)$(BASHCOMPDIR)" "$(DESTDIR)$(ZSHCOMPDIR)" "$(DESTDIR)$(FISHCOMPDIR)" \
		"$(DESTDIR)$(DOCDIR)/examples" "$(DESTDIR)$(DOCDIR)/docs"
	install -m 0755 "$(BIN)" "$(DESTDIR)$(BINDIR)/hal"
	install -m 0644 completions/hal.bash "$(DESTDIR)$(BASHCOMPDIR)/hal"
	install -m 0644 completions/_hal "$(DESTDIR)$(ZSHCOMPDIR)/_hal"
	install -m 0644 completions/hal.fish "$(DESTDIR)$(FISHCOMPDIR)/hal.fish"
	for page in $(MAN1) $(MAN5); do \
		sec=$${page##*.}; \
		gzip -9nc "man/$$page" > "$(DESTDIR)$(MANDIR)/man$$sec/$$page.gz" && \
		chmod 0644 "$(DESTDIR)$(MANDIR)/man$$sec/$$page.gz" || exit 1; \
	done
	for scope in system user; do \
		if [ $$scope = system ]; then dir="$(DESTDIR)$(SYSTEMDSYSTEMUNITDIR)"; \
		else dir="$(DESTDIR)$(SYSTEMDUSERUNITDIR)"; fi; \
		for unit in $(UNITS); do \
			sed 's|/usr/bin/hal|$(BINDIR)/hal|g' "dist/systemd/$$scope/$$unit" > "$$dir/$$unit" && \
			chmod 0644 "$$dir/$$unit" || exit 1; \
		done; \
	done
	install -m 0644 $(DOCS) "$(DESTDIR)$(DOCDIR)/"
	install -m 0644 $(addprefix docs/,$(GUIDE)) "$(DESTDIR)$(DOCDIR)/docs/"
	install -m 0644 dist/debian/copyright "$(DESTDIR)$(DOCDIR)/copyright"
	install -m 0644 dist/hal.toml "$(DESTDIR)$(DOCDIR)/examples/hal.toml"
	if [ -z "$(DESTDIR)" ]; then $(SHARE_STATE); fi
	if $(LIVE_SYSTEMD); then systemctl daemon-reload || true; fi

uninstall:
	if $(LIVE_SYSTEMD); then \
		systemctl stop hal-watch.service hal-rescue.timer hal-rescue.service 2>/dev/null || true; \
	fi
	if [ -z "$(DESTDIR)" ] && command -v systemctl >/dev/null; then \
		systemctl disable hal-watch.service hal-rescue.timer 2>/dev/null || true; \
		systemctl --global disable hal-watch.service hal-rescue.timer 2>/dev/null || true; \
	fi
	rm -f "$(DESTDIR)$(BINDIR)/hal" \
		"$(DESTDIR)$(BASHCOMPDIR)/hal" "$(DESTDIR)$(ZSHCOMPDIR)/_hal" "$(DESTDIR)$(FISHCOMPDIR)/hal.fish" \
		$(foreach p,$(MAN1),"$(DESTDIR)$(MANDIR)/man1/$(p).gz") \
		$(foreach p,$(MAN5),"$(DESTDIR)$(MANDIR)/man5/$(p).gz") \
		$(foreach u,$(UNITS),"$(DESTDIR)$(SYSTEMDSYSTEMUNITDIR)/$(u)" "$(DESTDIR)$(SYSTEMDUSERUNITDIR)/$(u)") \
		$(foreach d,$(DOCS) copyright examples/hal.toml $(addprefix docs/,$(GUIDE)),"$(DESTDIR)$(DOCDIR)/$(d)")
	rmdir "$(DESTDIR)$(DOCDIR)/examples" "$(DESTDIR)$(DOCDIR)/docs" "$(DESTDIR)$(DOCDIR)" 2>/dev/null || true
	if $(LIVE_SYSTEMD); then systemctl daemon-reload || true; fi

deb:
	$(CARGO) deb --locked
