// Command fakedesktop plays the two desktop services the tray talks to, on the
// session bus, for the desktop smoke test (tests/desktop/smoke.sh):
//
//   - org.freedesktop.Notifications: every Notify call is printed as
//     "notify: <summary> | <body>";
//   - org.kde.StatusNotifierWatcher with a host registered, so the tray
//     exports itself as a StatusNotifierItem (without a watcher AppIndicator
//     falls back to an XEmbed icon nobody can read): each time the item
//     registers or signals a change its properties are read back and printed
//     as "sni: title=… status=… icon=… desc=… menu=<first item's label>".
//
// It runs until killed. The first line on stdout is "fakedesktop ready".
package main

import (
	"crypto/sha256"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/godbus/dbus/v5"
	"github.com/godbus/dbus/v5/introspect"
	"github.com/godbus/dbus/v5/prop"

	"omniroute/app/tray/sni"
)

const (
	notifyName   = "org.freedesktop.Notifications"
	notifyPath   = "/org/freedesktop/Notifications"
	watcherName  = "org.kde.StatusNotifierWatcher"
	watcherPath  = "/StatusNotifierWatcher"
	itemIface    = "org.kde.StatusNotifierItem"
	dbusmenuName = "com.canonical.dbusmenu"
)

func main() {
	// fakedesktop -argb-sha256 FILE.png prints what the icon-sha256 of an item
	// showing that PNG reads.
	if len(os.Args) == 3 && os.Args[1] == "-argb-sha256" {
		b, err := os.ReadFile(os.Args[2])
		if err != nil {
			fmt.Fprintln(os.Stderr, "fakedesktop:", err)
			os.Exit(1)
		}
		fmt.Println(argbSum(b))
		return
	}
	// fakedesktop -click LABEL chooses the menu entry labelled LABEL of the
	// first registered item, as a user's click in the panel does.
	if len(os.Args) == 3 && os.Args[1] == "-click" {
		if err := click(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "fakedesktop:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "fakedesktop:", err)
		os.Exit(1)
	}
}

func run() error {
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return err
	}
	d := &desktop{conn: conn}
	if err := conn.Export(notifications{d}, notifyPath, notifyName); err != nil {
		return err
	}
	if err := conn.Export(watcher{d}, watcherPath, watcherName); err != nil {
		return err
	}
	props, err := prop.Export(conn, watcherPath, prop.Map{watcherName: {
		"RegisteredStatusNotifierItems":  {Value: []string{}, Emit: prop.EmitTrue},
		"IsStatusNotifierHostRegistered": {Value: true, Emit: prop.EmitTrue},
		"ProtocolVersion":                {Value: int32(0), Emit: prop.EmitTrue},
	}})
	if err != nil {
		return err
	}
	d.props = props
	node := &introspect.Node{Name: watcherPath, Interfaces: []introspect.Interface{
		introspect.IntrospectData, prop.IntrospectData,
		{Name: watcherName, Methods: introspect.Methods(watcher{d}), Properties: props.Introspection(watcherName)},
	}}
	if err := conn.Export(introspect.NewIntrospectable(node), watcherPath, "org.freedesktop.DBus.Introspectable"); err != nil {
		return err
	}
	for _, name := range []string{notifyName, watcherName} {
		reply, err := conn.RequestName(name, dbus.NameFlagDoNotQueue)
		if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
			return fmt.Errorf("own %s: %v (reply %v)", name, err, reply)
		}
	}
	// Item changes: AppIndicator signals NewIcon, NewStatus, NewTitle … on its
	// path; its menu signals LayoutUpdated / ItemsPropertiesUpdated on the menu's.
	for _, iface := range []string{itemIface, dbusmenuName} {
		if err := conn.AddMatchSignal(dbus.WithMatchInterface(iface)); err != nil {
			return err
		}
	}
	signals := make(chan *dbus.Signal, 256)
	conn.Signal(signals)
	fmt.Println("fakedesktop ready")
	for s := range signals {
		if strings.HasPrefix(s.Name, itemIface+".New") || strings.HasPrefix(s.Name, dbusmenuName+".") {
			if item, ok := d.item(s.Sender); ok {
				d.report(s.Sender, item)
			}
		}
	}
	return nil
}

// item is the registered item path of sender (AppIndicator's unique name).
func (d *desktop) item(sender string) (dbus.ObjectPath, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, it := range d.items {
		if name, path, ok := strings.Cut(it, "/"); ok && name == sender {
			return dbus.ObjectPath("/" + path), true
		}
	}
	return "", false
}

type desktop struct {
	conn  *dbus.Conn
	props *prop.Properties

	mu    sync.Mutex
	next  uint32
	items []string // "<bus name><object path>"
	last  string   // the last sni: line printed
}

// report reads the item's properties and its menu's first label and prints them.
func (d *desktop) report(sender string, path dbus.ObjectPath) {
	obj := d.conn.Object(sender, path)
	get := func(name string) string {
		v, err := obj.GetProperty(itemIface + "." + name)
		if err != nil {
			return ""
		}
		if s, ok := v.Value().(string); ok {
			return s
		}
		return fmt.Sprint(v.Value())
	}
	first := ""
	if menu, ok := func() (dbus.ObjectPath, bool) {
		v, err := obj.GetProperty(itemIface + ".Menu")
		p, isPath := v.Value().(dbus.ObjectPath)
		return p, err == nil && isPath
	}(); ok {
		first = firstLabel(d.conn.Object(sender, menu))
	}
	// The icon as ARGB32 pixels, whichever way the item carries it: a pixmap
	// (our StatusNotifierItem) or a PNG file named by IconName (AppIndicator).
	sum := ""
	if v, err := obj.GetProperty(itemIface + ".IconPixmap"); err == nil {
		var pms []sni.Pixmap
		if v.Store(&pms) == nil && len(pms) > 0 {
			sum = fmt.Sprintf("%x", sha256.Sum256(pms[0].Data))
		}
	}
	if b, err := os.ReadFile(get("IconName")); sum == "" && err == nil {
		sum = argbSum(b)
	}
	tip := ""
	if v, err := obj.GetProperty(itemIface + ".ToolTip"); err == nil {
		if f, ok := v.Value().([]any); ok && len(f) == 4 {
			tip = fmt.Sprint(f[2], " / ", f[3])
		}
	}
	line := fmt.Sprintf("sni: title=%q status=%q icon-sha256=%s desc=%q tooltip=%q menu=%q",
		get("Title"), get("Status"), sum, get("IconAccessibleDesc"), strings.ReplaceAll(tip, "\n", " / "), first)
	d.mu.Lock()
	defer d.mu.Unlock()
	if line != d.last { // menus signal often; print changes only
		d.last = line
		fmt.Println(line)
	}
}

// firstLabel is the label of the menu's first item (GetLayout of the root, one level).
func firstLabel(menu dbus.BusObject) string {
	var revision uint32
	var layout struct {
		ID       int32
		Props    map[string]dbus.Variant
		Children []dbus.Variant
	}
	if err := menu.Call(dbusmenuName+".GetLayout", 0, int32(0), int32(1), []string{"label"}).Store(&revision, &layout); err != nil {
		return ""
	}
	for _, c := range layout.Children {
		fields, ok := c.Value().([]any)
		if !ok || len(fields) < 2 {
			continue
		}
		if props, ok := fields[1].(map[string]dbus.Variant); ok {
			if l, ok := props["label"].Value().(string); ok {
				return l
			}
		}
	}
	return ""
}

// click finds the entry labelled label in the first registered item's menu
// (through the watcher this process's other instance plays) and clicks it.
func click(label string) error {
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return err
	}
	defer conn.Close()
	v, err := conn.Object(watcherName, watcherPath).GetProperty(watcherName + ".RegisteredStatusNotifierItems")
	if err != nil {
		return err
	}
	items, _ := v.Value().([]string)
	if len(items) == 0 {
		return fmt.Errorf("no item registered")
	}
	name, path, _ := strings.Cut(items[0], "/")
	mv, err := conn.Object(name, dbus.ObjectPath("/"+path)).GetProperty(itemIface + ".Menu")
	if err != nil {
		return err
	}
	menuPath, _ := mv.Value().(dbus.ObjectPath)
	menu := conn.Object(name, menuPath)
	var revision uint32
	var root struct {
		ID       int32
		Props    map[string]dbus.Variant
		Children []dbus.Variant
	}
	if err := menu.Call(dbusmenuName+".GetLayout", 0, int32(0), int32(1), []string{"label"}).Store(&revision, &root); err != nil {
		return err
	}
	for _, c := range root.Children {
		f, ok := c.Value().([]any)
		if !ok || len(f) < 2 {
			continue
		}
		props, _ := f[1].(map[string]dbus.Variant)
		if l, _ := props["label"].Value().(string); l == label {
			id, _ := f[0].(int32)
			return menu.Call(dbusmenuName+".Event", 0, id, "clicked", dbus.MakeVariant(""), uint32(0)).Err
		}
	}
	return fmt.Errorf("no menu entry %q", label)
}

// argbSum is the SHA-256 of a PNG's pixels as ARGB32 ("" if it is no PNG).
func argbSum(png []byte) string {
	pm, err := sni.PixmapFromPNG(png)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%x", sha256.Sum256(pm.Data))
}

// notifications is org.freedesktop.Notifications.
type notifications struct{ d *desktop }

func (n notifications) Notify(app string, replaces uint32, icon, summary, body string, actions []string,
	hints map[string]dbus.Variant, timeout int32) (uint32, *dbus.Error) {
	n.d.mu.Lock()
	n.d.next++
	id := n.d.next
	n.d.mu.Unlock()
	fmt.Printf("notify: %s | %s\n", summary, strings.ReplaceAll(body, "\n", " "))
	return id, nil
}

func (notifications) GetCapabilities() ([]string, *dbus.Error) { return []string{"body"}, nil }

func (notifications) CloseNotification(uint32) *dbus.Error { return nil }

func (notifications) GetServerInformation() (name, vendor, version, spec string, err *dbus.Error) {
	return "fakedesktop", "omniroute tests", "1", "1.2", nil
}

// watcher is org.kde.StatusNotifierWatcher.
type watcher struct{ d *desktop }

// RegisterStatusNotifierItem: AppIndicator passes its object path (the
// service is the caller); others pass a bus name (the path is the default).
func (w watcher) RegisterStatusNotifierItem(sender dbus.Sender, service string) *dbus.Error {
	path := dbus.ObjectPath("/StatusNotifierItem")
	name := service
	if strings.HasPrefix(service, "/") {
		path, name = dbus.ObjectPath(service), string(sender)
	}
	// Signals come from the unique name: remember the item under it too.
	unique := name
	_ = w.d.conn.BusObject().Call("org.freedesktop.DBus.GetNameOwner", 0, name).Store(&unique)
	w.d.mu.Lock()
	w.d.items = append(w.d.items, name+string(path))
	if unique != name {
		w.d.items = append(w.d.items, unique+string(path))
	}
	items := append([]string(nil), w.d.items...)
	w.d.mu.Unlock()
	w.d.props.SetMust(watcherName, "RegisteredStatusNotifierItems", items)
	_ = w.d.conn.Emit(watcherPath, watcherName+".StatusNotifierItemRegistered", name+string(path))
	go w.d.report(name, path)
	return nil
}

func (watcher) RegisterStatusNotifierHost(string) *dbus.Error { return nil }
