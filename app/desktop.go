//go:build desktop || bindings

package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/getlantern/systray"
	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"
	wruntime "github.com/wailsapp/wails/v2/pkg/runtime"

	"omniroute/app/autostart"
	"omniroute/app/tray"
	"omniroute/backend/server"
	"omniroute/backend/update"
)

// DesktopOptions configure the desktop shell.
type DesktopOptions struct {
	Server      server.Options
	Icons       fs.FS // build/: appicon.png and icons/tray-<health>.png
	StartHidden bool
	Stdout      io.Writer
}

// desktop is the running shell: one gateway, one window, one tray icon.
type desktop struct {
	o       DesktopOptions
	srv     *server.Server
	baseURL string
	log     *slog.Logger
	auto    autostart.Entry
	// ui draws the tray (set before the tray starts, never changed).
	ui trayUI

	mu      sync.Mutex
	wctx    context.Context // Wails' context, set at startup
	status  tray.Status
	pauseIt trayItem
	// statusIt is the status line at the top of the menu.
	statusIt trayItem
	// updateIt announces a newer release (hidden until the check finds one);
	// release is that release's version and page.
	updateIt trayItem
	release  update.Status
	// notes turns health changes into desktop notifications (nil: no
	// notification service).
	notes *tray.Watcher
}

// hasDisplay reports whether a window can be shown.
func hasDisplay() bool {
	if runtime.GOOS != "linux" {
		return true
	}
	return os.Getenv("DISPLAY") != "" || os.Getenv("WAYLAND_DISPLAY") != ""
}

// RunDesktop runs the gateway with its window and tray icon. Without a display
// it falls back to the headless gateway.
func RunDesktop(ctx context.Context, o DesktopOptions) error {
	if bindingsBuild {
		return wails.Run(&options.App{Title: "OmniRoute", Bind: []any{&Bindings{}}})
	}
	if !hasDisplay() {
		fmt.Fprintln(o.Stdout, "No display found: running the headless gateway; open the dashboard URL in a browser.")
		return RunHeadless(ctx, o.Server, o.Stdout)
	}
	srv, err := server.New(o.Server)
	if err != nil {
		return err
	}
	defer srv.Close()
	l, err := net.Listen("tcp", o.Server.Process.Addr())
	if err != nil {
		return fmt.Errorf("listen on %s: %w (is OmniRoute already running?)", o.Server.Process.Addr(), err)
	}
	PrintBanner(o.Stdout, srv, o.Server, l.Addr())
	serveCtx, stopServe := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(serveCtx, l) }()

	log := o.Server.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	cfg, _ := os.UserConfigDir()
	home, _ := os.UserHomeDir()
	auto := autostart.Entry{ConfigDir: cfg, Home: home, OS: runtime.GOOS}
	d := &desktop{o: o, srv: srv, baseURL: "http://" + l.Addr().String(), log: log, auto: auto}
	if n, err := tray.NewDBusNotifier("omniroute"); err == nil {
		d.notes = tray.NewWatcher(n, time.Now)
	} else {
		log.Info("desktop notifications off: no session bus", slog.String("error", err.Error()))
	}

	// Our StatusNotifierItem where a Linux panel reads one; otherwise systray,
	// which joins Wails' GTK loop: register it on the main thread before wails.Run.
	if ui, err := newSNITray(d.show); err == nil {
		d.ui = ui
		go d.trayReady()
	} else {
		log.Info("tray: systray", slog.String("why", err.Error()))
		d.ui = systrayUI{}
		systray.Register(func() { systray.SetTitle("OmniRoute"); d.trayReady() }, nil)
	}
	appIcon, _ := fs.ReadFile(o.Icons, "appicon.png")
	go func() {
		<-ctx.Done() // SIGINT/SIGTERM: quit through Wails, which stops the tray too
		d.quit()
	}()
	err = wails.Run(&options.App{
		Title:             "OmniRoute",
		Width:             1200,
		Height:            800,
		MinWidth:          820,
		MinHeight:         560,
		AssetServer:       &assetserver.Options{Handler: d.windowHandler()},
		HideWindowOnClose: true,
		StartHidden:       o.StartHidden,
		SingleInstanceLock: &options.SingleInstanceLock{
			UniqueId:               "dev.omniroute.desktop",
			OnSecondInstanceLaunch: func(options.SecondInstanceData) { d.show() },
		},
		OnStartup: d.startup,
		Bind:      []any{&Bindings{d: d}},
		Linux:     &linux.Options{Icon: appIcon, ProgramName: "omniroute"},
	})
	stopServe()
	if serr := <-served; err == nil && serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		err = serr
	}
	return err
}

func (d *desktop) startup(ctx context.Context) {
	d.mu.Lock()
	d.wctx = ctx
	d.mu.Unlock()
	d.log.Info("window ready")
	go d.relayEvents(ctx)
}

// windowEvent is the Wails event name carrying the gateway's live events to the
// window: its wails:// asset server cannot stream SSE, so the dashboard reads
// the same events (type and SSE data) through the Wails runtime instead.
const windowEvent = "omniroute:sse"

// relayEvents forwards bus events, and health when it changes, to the window.
func (d *desktop) relayEvents(ctx context.Context) {
	sub := d.srv.Events().Subscribe(256)
	defer sub.Close()
	tick := time.NewTicker(3 * time.Second)
	defer tick.Stop()
	last := ""
	health := func() {
		ev, sig := d.srv.API().HealthEvent()
		if sig != last {
			last = sig
			b, _ := json.Marshal(ev)
			wruntime.EventsEmit(ctx, windowEvent, "health", string(b))
		}
	}
	health()
	for {
		select {
		case <-ctx.Done():
			return
		case ev := <-sub.C:
			b, _ := json.Marshal(ev)
			wruntime.EventsEmit(ctx, windowEvent, ev.Type, string(b))
			health()
		case <-tick.C:
			health()
		}
	}
}

func (d *desktop) wailsCtx() context.Context {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.wctx
}

func (d *desktop) show() {
	if c := d.wailsCtx(); c != nil {
		wruntime.WindowUnminimise(c)
		wruntime.WindowShow(c)
	}
}

func (d *desktop) quit() {
	if c := d.wailsCtx(); c != nil {
		wruntime.Quit(c)
	}
}

// windowHandler serves the dashboard to the window through the gateway's own
// handler. Requests reach it only from the webview, so it presents them as
// same-machine requests and signs the window in with the management token.
func (d *desktop) windowHandler() http.Handler {
	h := d.srv.Handler()
	page := "/dashboard/#token=" + d.srv.Token()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Host = "127.0.0.1"
		r.Header.Del("Origin")
		if r.URL.Path == "/" || r.URL.Path == "/index.html" {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			fmt.Fprintf(w, `<!doctype html><meta charset="utf-8"><title>OmniRoute</title><script>location.replace(%q)</script>`, html.EscapeString(page))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Bindings are the native actions the window may call through Wails.
type Bindings struct{ d *desktop }

// CopyText puts text on the clipboard.
func (b *Bindings) CopyText(text string) error {
	if b.d == nil {
		return errors.New("no window")
	}
	return wruntime.ClipboardSetText(b.d.wailsCtx(), text)
}

// StartAtLogin reports whether the app starts at login.
func (b *Bindings) StartAtLogin() bool { return b.d != nil && b.d.auto.Enabled() }

// SetStartAtLogin turns start at login on or off.
func (b *Bindings) SetStartAtLogin(on bool) error {
	if b.d == nil {
		return errors.New("no window")
	}
	return b.d.setAutostart(on)
}

// DataDir returns the data directory path.
func (b *Bindings) DataDir() string {
	if b.d == nil {
		return ""
	}
	return b.d.o.Server.Process.DataDir
}

func (d *desktop) setAutostart(on bool) error {
	if !on {
		return d.auto.Disable()
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	exe, _ = filepath.EvalSymlinks(exe)
	return d.auto.Enable(exe)
}

func (d *desktop) icon(h tray.Health) []byte {
	b, err := fs.ReadFile(d.o.Icons, "icons/"+tray.Icon(h))
	if err != nil {
		return nil
	}
	return b
}

// trayReady builds the menu and keeps the icon in step with health.
func (d *desktop) trayReady() {
	d.log.Info("tray ready")
	d.refreshStatus()
	st := d.currentStatus()
	if b := d.icon(st.Health); b != nil {
		d.ui.SetIcon(b, tray.Headline(st))
	}
	d.ui.SetTooltip(tray.Tooltip(st))
	for _, it := range tray.Menu(st, trayAgents(), d.auto.Enabled()) {
		if it.Sep {
			d.ui.AddSeparator()
		}
		mi := d.ui.AddItem(it.Title, it.Tooltip, it.Checkbox, it.Checked)
		if it.Disabled {
			mi.Disable()
			d.statusIt = mi
			continue
		}
		if it.Action == tray.ActOpenRelease {
			d.updateIt = mi
			if it.Hidden {
				mi.Hide()
			}
		}
		if it.Action == tray.ActPause || it.Action == tray.ActResume {
			d.pauseIt = mi
		}
		for _, child := range it.Children {
			go d.onClick(mi.AddSubMenuItem(child.Title, child.Tooltip), child)
		}
		if len(it.Children) == 0 {
			go d.onClick(mi, it)
		}
	}
	go d.watchHealth()
	go d.watchUpdates()
}

// watchUpdates asks the opt-in release check (which reads the manifest at
// most once a day, and never when off) and shows the menu line once a newer
// release is verified.
func (d *desktop) watchUpdates() {
	tick := time.NewTicker(time.Hour)
	defer tick.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		st, ok := d.srv.API().UpdateStatus(ctx)
		cancel()
		if ok {
			d.mu.Lock()
			d.release = st
			d.mu.Unlock()
			d.refreshIcon()
		}
		<-tick.C
	}
}

func (d *desktop) onClick(mi trayItem, it tray.Item) {
	for range mi.Clicked() {
		d.handle(mi, it)
	}
}

func (d *desktop) handle(mi trayItem, it tray.Item) {
	ctx := d.wailsCtx()
	switch it.Action {
	case tray.ActOpen:
		d.show()
	case tray.ActCopyEndpoint:
		if ctx != nil {
			_ = wruntime.ClipboardSetText(ctx, d.baseURL+"/v1")
		}
	case tray.ActCopyKey:
		if key, err := d.srv.DefaultKey(); err == nil && ctx != nil {
			_ = wruntime.ClipboardSetText(ctx, key)
		}
	case tray.ActConfigureAgent:
		msg := configureAgent(d.srv, d.baseURL, it.Arg)
		d.log.Info("configure agent", slog.String("agent", it.Arg), slog.String("result", msg))
		if ctx != nil {
			_, _ = wruntime.MessageDialog(ctx, wruntime.MessageDialogOptions{Type: wruntime.InfoDialog, Title: "Configure " + it.Title, Message: msg})
		}
	case tray.ActResetBreakers:
		d.log.Info("tray: reset breakers", slog.Int("reset", d.srv.ResetBreakers()))
	case tray.ActClearCooldowns:
		n, err := d.srv.API().ClearAllCooldowns()
		d.log.Info("tray: clear cooldowns", slog.Int("cleared", n), slog.Any("error", err))
	case tray.ActPause, tray.ActResume:
		paused := !d.srv.API().Paused()
		d.srv.API().SetPaused(paused)
		if paused {
			mi.SetTitle("Resume Gateway")
		} else {
			mi.SetTitle("Pause Gateway")
		}
		d.refreshIcon()
	case tray.ActStartAtLogin:
		on := !mi.Checked()
		if err := d.setAutostart(on); err != nil {
			d.log.Warn("start at login", slog.String("error", err.Error()))
			return
		}
		if on {
			mi.Check()
		} else {
			mi.Uncheck()
		}
	case tray.ActOpenRelease:
		d.mu.Lock()
		url := d.release.URL
		d.mu.Unlock()
		if ctx != nil && url != "" {
			wruntime.BrowserOpenURL(ctx, url)
		}
	case tray.ActQuit:
		d.quit()
	}
}

func (d *desktop) refreshStatus() {
	report := d.srv.Health().Report
	st := tray.FromReport(report, d.srv.API().Paused())
	d.mu.Lock()
	if d.release.Available {
		st.Update = d.release.Latest
	}
	d.status = st
	if d.notes != nil {
		// Under d.mu: the watcher is not safe for concurrent use.
		d.notes.Observe(report, d.srv.API().Settings.General().MuteNotifications)
	}
	d.mu.Unlock()
}

func (d *desktop) currentStatus() tray.Status {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.status
}

// refreshIcon recomputes health and updates the icon and tooltip when they change.
func (d *desktop) refreshIcon() {
	before := d.currentStatus()
	d.refreshStatus()
	after := d.currentStatus()
	if after.Health != before.Health {
		if b := d.icon(after.Health); b != nil {
			d.ui.SetIcon(b, tray.Headline(after))
		}
		d.log.Info("tray icon", slog.String("health", string(after.Health)), slog.String("status", tray.StatusLine(after)))
	}
	if line := tray.StatusLine(after); line != tray.StatusLine(before) || tray.Tooltip(after) != tray.Tooltip(before) {
		d.ui.SetTooltip(tray.Tooltip(after))
		if d.statusIt != nil {
			d.statusIt.SetTitle(line)
			d.statusIt.SetTooltip(tray.Tooltip(after))
		}
	}
	if after.Update != before.Update && d.updateIt != nil {
		d.updateIt.SetTitle(tray.UpdateTitle(after.Update))
		if after.Update != "" {
			d.updateIt.Show()
		} else {
			d.updateIt.Hide()
		}
	}
	if after.Paused != before.Paused && d.pauseIt != nil {
		// Paused from the dashboard: keep the menu's wording in step.
		if after.Paused {
			d.pauseIt.SetTitle("Resume Gateway")
		} else {
			d.pauseIt.SetTitle("Pause Gateway")
		}
	}
}

// watchHealth follows the event bus (and a slow tick, since cooldowns expire lazily).
func (d *desktop) watchHealth() {
	sub := d.srv.Events().Subscribe(64)
	defer sub.Close()
	tick := time.NewTicker(3 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-sub.C:
		case <-tick.C:
		}
		d.refreshIcon()
	}
}
