package sni

import (
	"bufio"
	"bytes"
	"image"
	"image/color"
	"image/png"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestPixmapFromPNG: pixels come out as ARGB32 in network byte order, alpha kept.
func TestPixmapFromPNG(t *testing.T) {
	img := image.NewNRGBA(image.Rect(0, 0, 2, 1))
	img.Set(0, 0, color.NRGBA{R: 0x11, G: 0x22, B: 0x33, A: 0xff})
	img.Set(1, 0, color.NRGBA{R: 0xaa, G: 0xbb, B: 0xcc, A: 0x80})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	pm, err := PixmapFromPNG(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{0xff, 0x11, 0x22, 0x33, 0x80, 0xaa, 0xbb, 0xcc}
	if pm.Width != 2 || pm.Height != 1 || !bytes.Equal(pm.Data, want) {
		t.Fatalf("pixmap %dx%d % x, want 2x1 % x", pm.Width, pm.Height, pm.Data, want)
	}
	if _, err := PixmapFromPNG([]byte("not a png")); err == nil {
		t.Fatal("a broken icon was accepted")
	}
}

// TestMenuLayoutAndClicks: the layout panels read (labels, checkmarks,
// visibility, separators, submenus, depth), property updates, and clicks by
// Event and EventGroup reaching the entry's channel.
func TestMenuLayoutAndClicks(t *testing.T) {
	m := newMenu(nil)
	status := m.AddItem("2 of 3 connections serving", "", false, false)
	status.Disable()
	update := m.AddItem("Version 9 is available…", "", false, false)
	update.Hide()
	m.AddSeparator()
	agents := m.AddItem("Configure Agent", "", false, false)
	codex := agents.AddSubMenuItem("Codex CLI", "")
	login := m.AddItem("Start at Login", "", true, true)
	api := menuMethods{m}

	rev, root, derr := api.GetLayout(0, -1, nil)
	if derr != nil || rev == 0 {
		t.Fatalf("layout: %v rev %d", derr, rev)
	}
	var labels []string
	for _, c := range root.Children {
		l := c.Value().(layout)
		switch {
		case l.Props["type"].Value() == "separator":
			labels = append(labels, "—")
		default:
			labels = append(labels, l.Props["label"].Value().(string))
		}
	}
	if got := strings.Join(labels, "|"); got != "2 of 3 connections serving|Version 9 is available…|—|Configure Agent|Start at Login" {
		t.Fatalf("labels %s", got)
	}
	first := root.Children[0].Value().(layout)
	if first.Props["enabled"].Value() != false {
		t.Error("the status line is clickable")
	}
	if root.Children[1].Value().(layout).Props["visible"].Value() != false {
		t.Error("the hidden update line is visible")
	}
	agentsNode := root.Children[3].Value().(layout)
	if agentsNode.Props["children-display"].Value() != "submenu" || len(agentsNode.Children) != 1 {
		t.Errorf("submenu %+v", agentsNode)
	}
	loginNode := root.Children[4].Value().(layout)
	if loginNode.Props["toggle-type"].Value() != "checkmark" || loginNode.Props["toggle-state"].Value() != int32(1) {
		t.Errorf("checkbox %+v", loginNode.Props)
	}
	// Depth 0: the node alone; names filter the properties.
	if _, l, _ := api.GetLayout(0, 0, []string{"label"}); len(l.Children) != 0 {
		t.Errorf("depth 0 returned %d children", len(l.Children))
	}
	if _, l, _ := api.GetLayout(agents.id, 1, []string{"label"}); len(l.Children) != 1 || len(l.Children[0].Value().(layout).Props) != 1 {
		t.Errorf("filtered subtree %+v", l)
	}
	if _, _, derr := api.GetLayout(999, -1, nil); derr == nil {
		t.Error("an unknown parent was answered")
	}

	status.SetTitle("All 3 connections serving")
	login.Uncheck()
	update.Show()
	props, _ := api.GetGroupProperties([]int32{status.id, login.id, update.id}, []string{"label", "toggle-state", "visible"})
	if props[0].Props["label"].Value() != "All 3 connections serving" || props[1].Props["toggle-state"].Value() != int32(0) ||
		props[2].Props["visible"].Value() != true || login.Checked() {
		t.Errorf("updated props %+v", props)
	}
	if v, _ := api.GetProperty(status.id, "label"); v.Value() != "All 3 connections serving" {
		t.Errorf("GetProperty %v", v)
	}

	if derr := api.Event(codex.id, "clicked", dbus.MakeVariant(""), 0); derr != nil {
		t.Fatal(derr)
	}
	_ = api.Event(codex.id, "clicked", dbus.MakeVariant(""), 0) // a second click while one waits is absorbed
	select {
	case <-codex.ClickedCh():
	default:
		t.Fatal("the click did not reach the entry")
	}
	select {
	case <-codex.ClickedCh():
		t.Fatal("two clicks queued")
	default:
	}
	missing, _ := api.EventGroup([]menuEvent{{ID: login.id, EventID: "clicked"}, {ID: 999, EventID: "clicked"}, {ID: status.id, EventID: "hovered"}})
	if len(missing) != 1 || missing[0] != 999 {
		t.Errorf("missing %v", missing)
	}
	select {
	case <-login.ClickedCh():
	default:
		t.Fatal("the grouped click did not reach the entry")
	}
	if derr := api.Event(0, "clicked", dbus.MakeVariant(""), 0); derr == nil {
		t.Error("a click on the root was accepted")
	}
}

// TestOverARealBus: on a private dbus-daemon with a watcher, the item
// registers, and a reader gets its tooltip, icon, accessible description and
// menu; without a watcher New says so.
func TestOverARealBus(t *testing.T) {
	addr := privateBus(t)
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := New(conn, Options{ID: "omniroute", Title: "OmniRoute"}); !IsNoWatcher(err) {
		t.Fatalf("without a watcher: %v", err)
	}

	reader, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	registered := make(chan string, 1)
	if err := reader.Export(fakeWatcher{registered}, watcherPath, watcherName); err != nil {
		t.Fatal(err)
	}
	if _, err := reader.RequestName(watcherName, dbus.NameFlagDoNotQueue); err != nil {
		t.Fatal(err)
	}

	clicked := make(chan struct{}, 1)
	tr, err := New(conn, Options{ID: "omniroute", Title: "OmniRoute", Activate: func() { clicked <- struct{}{} }})
	if err != nil {
		t.Fatal(err)
	}
	var name string
	select {
	case name = <-registered:
	case <-time.After(10 * time.Second):
		t.Fatal("the item did not register")
	}
	icon := tinyPNG(t)
	if err := tr.SetIcon(icon, "OmniRoute: degraded"); err != nil {
		t.Fatal(err)
	}
	if err := tr.SetToolTip("OmniRoute — degraded", "2 of 3 connections serving"); err != nil {
		t.Fatal(err)
	}
	it := tr.Menu().AddItem("2 of 3 connections serving", "", false, false)
	it.Disable()

	obj := reader.Object(name, itemPath)
	tip, err := obj.GetProperty(itemIface + ".ToolTip")
	if err != nil {
		t.Fatal(err)
	}
	fields := tip.Value().([]any)
	if fields[2] != "OmniRoute — degraded" || fields[3] != "2 of 3 connections serving" {
		t.Errorf("tooltip %v", fields)
	}
	if d, _ := obj.GetProperty(itemIface + ".IconAccessibleDesc"); d.Value() != "OmniRoute: degraded" {
		t.Errorf("icon description %v", d)
	}
	pm, _ := obj.GetProperty(itemIface + ".IconPixmap")
	if pms := pm.Value().([][]any); len(pms) != 1 || pms[0][0] != int32(1) {
		t.Errorf("pixmap %v", pm)
	}
	var rev uint32
	var l layout
	if err := reader.Object(name, menuPath).Call(menuIface+".GetLayout", 0, int32(0), int32(-1), []string{}).Store(&rev, &l); err != nil {
		t.Fatal(err)
	}
	if len(l.Children) != 1 {
		t.Fatalf("menu %+v", l)
	}
	if err := obj.Call(itemIface+".Activate", 0, int32(0), int32(0)).Err; err != nil {
		t.Fatal(err)
	}
	select {
	case <-clicked:
	case <-time.After(10 * time.Second):
		t.Fatal("Activate did not reach the app")
	}
}

type fakeWatcher struct{ registered chan string }

func (w fakeWatcher) RegisterStatusNotifierItem(sender dbus.Sender, service string) *dbus.Error {
	w.registered <- service
	return nil
}

// privateBus starts a dbus-daemon for the test and returns its address.
func privateBus(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("dbus-daemon", "--session", "--nofork", "--print-address")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("dbus-daemon (Debian package dbus-daemon) is needed: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(line)
}

func tinyPNG(t *testing.T) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.NRGBA{R: 1, G: 2, B: 3, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
