//go:build desktop || bindings

package tray

import (
	"github.com/godbus/dbus/v5"
)

// DBusNotifier shows notifications through the freedesktop notification
// service (org.freedesktop.Notifications on the session bus), as every Linux
// desktop serves it. Each connection's notes replace its previous one.
type DBusNotifier struct {
	conn *dbus.Conn
	// Icon is the notification's icon name or file path.
	Icon string
}

// NewDBusNotifier connects to the session bus; an error when there is none
// (the caller then shows no notifications).
func NewDBusNotifier(icon string) (*DBusNotifier, error) {
	c, err := dbus.SessionBus()
	if err != nil {
		return nil, err
	}
	return &DBusNotifier{conn: c, Icon: icon}, nil
}

// Notify calls org.freedesktop.Notifications.Notify.
func (n *DBusNotifier) Notify(note Note) error {
	urgency := byte(1)
	if note.Urgent {
		urgency = 2
	}
	obj := n.conn.Object("org.freedesktop.Notifications", "/org/freedesktop/Notifications")
	return obj.Call("org.freedesktop.Notifications.Notify", 0, "OmniRoute", uint32(0), n.Icon, note.Summary, note.Body,
		[]string{}, map[string]dbus.Variant{"urgency": dbus.MakeVariant(urgency), "desktop-entry": dbus.MakeVariant("omniroute")},
		int32(-1)).Err
}
