package sni

import (
	"strconv"
	"sync"

	"github.com/godbus/dbus/v5"
	"github.com/godbus/dbus/v5/introspect"
	"github.com/godbus/dbus/v5/prop"
)

// Menu is the item's menu, served over com.canonical.dbusmenu: panels read
// its layout and send click events back.
type Menu struct {
	conn *dbus.Conn // nil in tests: nothing is signalled

	mu       sync.Mutex
	revision uint32
	nextID   int32
	root     *MenuItem
	byID     map[int32]*MenuItem
}

// MenuItem is one entry; its methods match the ones the desktop app uses on
// systray's items, so either tray can be driven the same way.
type MenuItem struct {
	m        *Menu
	id       int32
	parent   *MenuItem
	children []*MenuItem

	label, tooltip    string
	separator         bool
	checkbox, checked bool
	disabled, hidden  bool
	clicked           chan struct{}
}

// layout is one node of GetLayout's answer: (ia{sv}av).
type layout struct {
	ID       int32
	Props    map[string]dbus.Variant
	Children []dbus.Variant
}

// itemProps is one entry of GetGroupProperties' answer and of
// ItemsPropertiesUpdated: (ia{sv}).
type itemProps struct {
	ID    int32
	Props map[string]dbus.Variant
}

// menuEvent is one entry of EventGroup: (isvu).
type menuEvent struct {
	ID        int32
	EventID   string
	Data      dbus.Variant
	Timestamp uint32
}

func newMenu(conn *dbus.Conn) *Menu {
	m := &Menu{conn: conn, revision: 1, byID: map[int32]*MenuItem{}}
	m.root = &MenuItem{m: m, id: 0}
	m.byID[0] = m.root
	return m
}

func (m *Menu) export() error {
	props, err := prop.Export(m.conn, menuPath, prop.Map{menuIface: {
		"Version":       {Value: uint32(3)},
		"TextDirection": {Value: "ltr"},
		"Status":        {Value: "normal"},
		"IconThemePath": {Value: []string{}},
	}})
	if err != nil {
		return err
	}
	if err := m.conn.Export(menuMethods{m}, menuPath, menuIface); err != nil {
		return err
	}
	node := &introspect.Node{Name: string(menuPath), Interfaces: []introspect.Interface{
		introspect.IntrospectData, prop.IntrospectData,
		{Name: menuIface, Methods: introspect.Methods(menuMethods{m}), Properties: props.Introspection(menuIface),
			Signals: []introspect.Signal{
				{Name: "LayoutUpdated", Args: []introspect.Arg{{Name: "revision", Type: "u"}, {Name: "parent", Type: "i"}}},
				{Name: "ItemsPropertiesUpdated", Args: []introspect.Arg{{Name: "updatedProps", Type: "a(ia{sv})"}, {Name: "removedProps", Type: "a(ias)"}}},
			}},
	}}
	return m.conn.Export(introspect.NewIntrospectable(node), menuPath, introspectIf)
}

// AddItem appends an entry to the top level.
func (m *Menu) AddItem(label, tooltip string, checkbox, checked bool) *MenuItem {
	return m.add(m.root, &MenuItem{label: label, tooltip: tooltip, checkbox: checkbox, checked: checked})
}

// AddSeparator appends a separator line to the top level.
func (m *Menu) AddSeparator() { m.add(m.root, &MenuItem{separator: true}) }

// AddSubMenuItem appends an entry to it's submenu.
func (it *MenuItem) AddSubMenuItem(label, tooltip string) *MenuItem {
	return it.m.add(it, &MenuItem{label: label, tooltip: tooltip})
}

func (m *Menu) add(parent, it *MenuItem) *MenuItem {
	m.mu.Lock()
	m.nextID++
	it.m, it.id, it.parent, it.clicked = m, m.nextID, parent, make(chan struct{}, 1)
	parent.children = append(parent.children, it)
	m.byID[it.id] = it
	m.revision++
	rev, pid := m.revision, parent.id
	m.mu.Unlock()
	m.emit("LayoutUpdated", rev, pid)
	return it
}

// ClickedCh receives a value each time the entry is chosen (a click waiting
// to be read absorbs the next ones).
func (it *MenuItem) ClickedCh() <-chan struct{} { return it.clicked }

// SetTitle changes the label.
func (it *MenuItem) SetTitle(s string) { it.update(func() { it.label = s }) }

// SetTooltip is kept for systray parity: dbusmenu has no per-item tooltip.
func (it *MenuItem) SetTooltip(s string) { it.update(func() { it.tooltip = s }) }

// Check ticks a checkbox entry; Uncheck clears it.
func (it *MenuItem) Check()   { it.update(func() { it.checked = true }) }
func (it *MenuItem) Uncheck() { it.update(func() { it.checked = false }) }

// Checked reports the tick.
func (it *MenuItem) Checked() bool {
	it.m.mu.Lock()
	defer it.m.mu.Unlock()
	return it.checked
}

// Disable greys the entry out.
func (it *MenuItem) Disable() { it.update(func() { it.disabled = true }) }

// Show and Hide toggle the entry's visibility.
func (it *MenuItem) Show() { it.update(func() { it.hidden = false }) }
func (it *MenuItem) Hide() { it.update(func() { it.hidden = true }) }

// update changes the entry under the lock and tells the panels.
func (it *MenuItem) update(change func()) {
	m := it.m
	m.mu.Lock()
	change()
	p := itemProps{ID: it.id, Props: it.props()}
	m.mu.Unlock()
	m.emit("ItemsPropertiesUpdated", []itemProps{p}, []struct {
		ID    int32
		Props []string
	}{})
}

// props are the entry's dbusmenu properties (caller holds the lock).
func (it *MenuItem) props() map[string]dbus.Variant {
	p := map[string]dbus.Variant{}
	if it.id == 0 {
		p["children-display"] = dbus.MakeVariant("submenu")
		return p
	}
	if it.separator {
		p["type"] = dbus.MakeVariant("separator")
		return p
	}
	p["label"] = dbus.MakeVariant(it.label)
	p["enabled"] = dbus.MakeVariant(!it.disabled)
	p["visible"] = dbus.MakeVariant(!it.hidden)
	if it.checkbox {
		p["toggle-type"] = dbus.MakeVariant("checkmark")
		state := int32(0)
		if it.checked {
			state = 1
		}
		p["toggle-state"] = dbus.MakeVariant(state)
	}
	if len(it.children) > 0 {
		p["children-display"] = dbus.MakeVariant("submenu")
	}
	return p
}

// layoutOf builds the node for it, depth levels down (-1: all), keeping only
// names (empty: every property). The caller holds the lock.
func (it *MenuItem) layoutOf(depth int32, names []string) layout {
	l := layout{ID: it.id, Props: filter(it.props(), names), Children: []dbus.Variant{}}
	if depth == 0 {
		return l
	}
	for _, c := range it.children {
		l.Children = append(l.Children, dbus.MakeVariant(c.layoutOf(depth-1, names)))
	}
	return l
}

func filter(p map[string]dbus.Variant, names []string) map[string]dbus.Variant {
	if len(names) == 0 {
		return p
	}
	out := make(map[string]dbus.Variant, len(names))
	for _, n := range names {
		if v, ok := p[n]; ok {
			out[n] = v
		}
	}
	return out
}

func (m *Menu) emit(signal string, args ...any) {
	if m.conn != nil {
		_ = m.conn.Emit(menuPath, menuIface+"."+signal, args...)
	}
}

// click delivers a "clicked" event to the entry.
func (m *Menu) click(id int32) bool {
	m.mu.Lock()
	it, ok := m.byID[id]
	m.mu.Unlock()
	if !ok || it.id == 0 {
		return false
	}
	select {
	case it.clicked <- struct{}{}:
	default: // one click already waits: the handler has not read it yet
	}
	return true
}

// menuMethods are com.canonical.dbusmenu's methods.
type menuMethods struct{ m *Menu }

// GetLayout returns the subtree under parentID.
func (mm menuMethods) GetLayout(parentID, depth int32, names []string) (uint32, layout, *dbus.Error) {
	m := mm.m
	m.mu.Lock()
	defer m.mu.Unlock()
	it, ok := m.byID[parentID]
	if !ok {
		return 0, layout{}, dbus.MakeFailedError(errUnknownItem(parentID))
	}
	return m.revision, it.layoutOf(depth, names), nil
}

// GetGroupProperties returns the properties of several entries.
func (mm menuMethods) GetGroupProperties(ids []int32, names []string) ([]itemProps, *dbus.Error) {
	m := mm.m
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []itemProps{}
	for _, id := range ids {
		if it, ok := m.byID[id]; ok {
			out = append(out, itemProps{ID: id, Props: filter(it.props(), names)})
		}
	}
	return out, nil
}

// GetProperty returns one property of one entry.
func (mm menuMethods) GetProperty(id int32, name string) (dbus.Variant, *dbus.Error) {
	m := mm.m
	m.mu.Lock()
	defer m.mu.Unlock()
	it, ok := m.byID[id]
	if !ok {
		return dbus.Variant{}, dbus.MakeFailedError(errUnknownItem(id))
	}
	v, ok := it.props()[name]
	if !ok {
		return dbus.MakeVariant(""), nil
	}
	return v, nil
}

// Event: a panel reports a click (others — hovered, opened — are ignored).
func (mm menuMethods) Event(id int32, eventID string, data dbus.Variant, timestamp uint32) *dbus.Error {
	if eventID == "clicked" && !mm.m.click(id) {
		return dbus.MakeFailedError(errUnknownItem(id))
	}
	return nil
}

// EventGroup: several events at once; the ids not found come back.
func (mm menuMethods) EventGroup(events []menuEvent) ([]int32, *dbus.Error) {
	missing := []int32{}
	for _, e := range events {
		if e.EventID == "clicked" && !mm.m.click(e.ID) {
			missing = append(missing, e.ID)
		}
	}
	return missing, nil
}

// AboutToShow: the layout never changes on opening.
func (menuMethods) AboutToShow(id int32) (bool, *dbus.Error) { return false, nil }

// AboutToShowGroup: likewise for several submenus.
func (menuMethods) AboutToShowGroup(ids []int32) ([]int32, []int32, *dbus.Error) {
	return []int32{}, []int32{}, nil
}

type errUnknownItem int32

func (e errUnknownItem) Error() string { return "sni: no menu item " + strconv.Itoa(int(e)) }
