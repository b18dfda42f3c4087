// Package sni is the tray icon as a StatusNotifierItem with a dbusmenu menu,
// spoken directly on the session bus: what Linux panels (KDE, GNOME's
// AppIndicator extension, XFCE's and LXQt's status notifier plugins, waybar)
// read. Unlike the AppIndicator library systray uses, it exports the ToolTip
// and the icon's accessible description, so a panel can show the status
// sentence on hover and a screen reader can say the state. The desktop app uses
// it when a StatusNotifierWatcher is on the bus and falls back to systray
// otherwise.
package sni

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"os"

	"github.com/godbus/dbus/v5"
	"github.com/godbus/dbus/v5/introspect"
	"github.com/godbus/dbus/v5/prop"
)

const (
	itemIface    = "org.kde.StatusNotifierItem"
	itemPath     = dbus.ObjectPath("/StatusNotifierItem")
	watcherName  = "org.kde.StatusNotifierWatcher"
	watcherPath  = dbus.ObjectPath("/StatusNotifierWatcher")
	menuIface    = "com.canonical.dbusmenu"
	menuPath     = dbus.ObjectPath("/MenuBar")
	propsIface   = "org.freedesktop.DBus.Properties"
	dbusName     = "org.freedesktop.DBus"
	introspectIf = "org.freedesktop.DBus.Introspectable"
)

// noWatcherError: no StatusNotifierWatcher on the bus (no panel reads
// items); the caller uses another tray.
type noWatcherError struct{}

func (noWatcherError) Error() string { return "sni: no StatusNotifierWatcher on the session bus" }

// IsNoWatcher reports whether err says no panel reads status notifier items.
func IsNoWatcher(err error) bool { return errors.As(err, new(noWatcherError)) }

// Pixmap is one icon size as the protocol carries it: ARGB32, network byte order.
type Pixmap struct {
	Width, Height int32
	Data          []byte
}

// PixmapFromPNG converts a PNG to the protocol's ARGB32 pixmap.
func PixmapFromPNG(b []byte) (Pixmap, error) {
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return Pixmap{}, fmt.Errorf("sni: icon: %w", err)
	}
	r := img.Bounds()
	nrgba := image.NewNRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
	draw.Draw(nrgba, nrgba.Bounds(), img, r.Min, draw.Src)
	data := make([]byte, 0, 4*r.Dx()*r.Dy())
	for i := 0; i < len(nrgba.Pix); i += 4 {
		data = append(data, nrgba.Pix[i+3], nrgba.Pix[i], nrgba.Pix[i+1], nrgba.Pix[i+2])
	}
	return Pixmap{Width: int32(r.Dx()), Height: int32(r.Dy()), Data: data}, nil
}

// toolTip is the ToolTip property: (icon name, icon pixmaps, title, description).
type toolTip struct {
	IconName    string
	IconPixmaps []Pixmap
	Title       string
	Description string
}

// Tray is one exported StatusNotifierItem and its menu.
type Tray struct {
	conn    *dbus.Conn
	name    string
	props   *prop.Properties
	menu    *Menu
	onClick func() // the item itself activated (left click)
}

// Options describe the item.
type Options struct {
	// ID is the application's id (e.g. "omniroute"); Title its name.
	ID, Title string
	// Activate runs when the icon is clicked (not its menu).
	Activate func()
}

// New exports the item and its menu on conn and registers it with the
// watcher; an error satisfying IsNoWatcher when no panel reads items.
func New(conn *dbus.Conn, o Options) (*Tray, error) {
	if !hasOwner(conn, watcherName) {
		return nil, noWatcherError{}
	}
	t := &Tray{conn: conn, name: fmt.Sprintf("org.kde.StatusNotifierItem-%d-1", os.Getpid()), onClick: o.Activate}
	t.menu = newMenu(conn)
	props, err := prop.Export(conn, itemPath, prop.Map{itemIface: {
		"Category":            {Value: "ApplicationStatus"},
		"Id":                  {Value: o.ID},
		"Title":               {Value: o.Title, Emit: prop.EmitTrue},
		"Status":              {Value: "Active", Emit: prop.EmitTrue},
		"WindowId":            {Value: int32(0)},
		"IconName":            {Value: ""},
		"IconPixmap":          {Value: []Pixmap{}, Emit: prop.EmitTrue},
		"IconAccessibleDesc":  {Value: "", Emit: prop.EmitTrue},
		"OverlayIconName":     {Value: ""},
		"OverlayIconPixmap":   {Value: []Pixmap{}},
		"AttentionIconName":   {Value: ""},
		"AttentionIconPixmap": {Value: []Pixmap{}},
		"AttentionMovieName":  {Value: ""},
		"IconThemePath":       {Value: ""},
		"ToolTip":             {Value: toolTip{IconPixmaps: []Pixmap{}}, Emit: prop.EmitTrue},
		"ItemIsMenu":          {Value: false},
		"Menu":                {Value: menuPath},
	}})
	if err != nil {
		return nil, err
	}
	t.props = props
	if err := conn.Export(itemMethods{t}, itemPath, itemIface); err != nil {
		return nil, err
	}
	node := &introspect.Node{Name: string(itemPath), Interfaces: []introspect.Interface{
		introspect.IntrospectData, prop.IntrospectData,
		{Name: itemIface, Methods: introspect.Methods(itemMethods{t}), Properties: props.Introspection(itemIface),
			Signals: []introspect.Signal{{Name: "NewTitle"}, {Name: "NewIcon"}, {Name: "NewToolTip"},
				{Name: "NewStatus", Args: []introspect.Arg{{Name: "status", Type: "s"}}}}},
	}}
	if err := conn.Export(introspect.NewIntrospectable(node), itemPath, introspectIf); err != nil {
		return nil, err
	}
	if err := t.menu.export(); err != nil {
		return nil, err
	}
	if reply, err := conn.RequestName(t.name, dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		return nil, fmt.Errorf("sni: own %s: %v", t.name, err)
	}
	if err := t.register(); err != nil {
		return nil, err
	}
	return t, nil
}

// register announces the item to the watcher.
func (t *Tray) register() error {
	return t.conn.Object(watcherName, watcherPath).Call(watcherName+".RegisterStatusNotifierItem", 0, t.name).Err
}

// Reregister follows a panel restart: it watches for a new watcher and
// registers again, until done is closed.
func (t *Tray) Reregister(done <-chan struct{}) {
	if err := t.conn.AddMatchSignal(dbus.WithMatchInterface(dbusName), dbus.WithMatchMember("NameOwnerChanged"),
		dbus.WithMatchArg(0, watcherName)); err != nil {
		return
	}
	ch := make(chan *dbus.Signal, 8)
	t.conn.Signal(ch)
	defer t.conn.RemoveSignal(ch)
	for {
		select {
		case <-done:
			return
		case s := <-ch:
			if s.Name == dbusName+".NameOwnerChanged" && len(s.Body) == 3 && s.Body[0] == watcherName && s.Body[2] != "" {
				_ = t.register()
			}
		}
	}
}

// SetIcon shows png (and says desc to screen readers).
func (t *Tray) SetIcon(png []byte, desc string) error {
	pm, err := PixmapFromPNG(png)
	if err != nil {
		return err
	}
	t.props.SetMust(itemIface, "IconPixmap", []Pixmap{pm})
	t.props.SetMust(itemIface, "IconAccessibleDesc", desc)
	return t.conn.Emit(itemPath, itemIface+".NewIcon")
}

// SetToolTip sets the hover text: a title line and a description.
func (t *Tray) SetToolTip(title, description string) error {
	t.props.SetMust(itemIface, "ToolTip", toolTip{IconPixmaps: []Pixmap{}, Title: title, Description: description})
	return t.conn.Emit(itemPath, itemIface+".NewToolTip")
}

// SetTitle names the item.
func (t *Tray) SetTitle(title string) error {
	t.props.SetMust(itemIface, "Title", title)
	return t.conn.Emit(itemPath, itemIface+".NewTitle")
}

// Menu is the item's menu.
func (t *Tray) Menu() *Menu { return t.menu }

// itemMethods are the item's D-Bus methods.
type itemMethods struct{ t *Tray }

// Activate: the icon was clicked.
func (m itemMethods) Activate(x, y int32) *dbus.Error {
	if m.t.onClick != nil {
		go m.t.onClick()
	}
	return nil
}

// SecondaryActivate: a middle click; treated as a click.
func (m itemMethods) SecondaryActivate(x, y int32) *dbus.Error { return m.Activate(x, y) }

// ContextMenu: the panel shows the exported menu itself.
func (itemMethods) ContextMenu(x, y int32) *dbus.Error { return nil }

// Scroll does nothing.
func (itemMethods) Scroll(delta int32, orientation string) *dbus.Error { return nil }

// hasOwner reports whether a bus name has an owner.
func hasOwner(conn *dbus.Conn, name string) bool {
	var owned bool
	err := conn.BusObject().Call(dbusName+".NameHasOwner", 0, name).Store(&owned)
	return err == nil && owned
}
