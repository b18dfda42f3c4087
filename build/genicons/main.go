// Command genicons draws OmniRoute's app icon and the tray icons, one per
// health state, into build/ (run `go run ./build/genicons` from the repo root).
package main

import (
	"image"
	"image/color"
	"image/png"
	"log"
	"math"
	"os"
	"path/filepath"
)

// Each state has its own mark inside the disc, so the states differ in shape
// and not only in colour (for colour-blind users and monochrome panels).
type mark int

const (
	markRing  mark = iota // "O": the brand (the app icon)
	markCheck             // healthy: a check mark
	markBang              // degraded: "!"
	markCross             // unhealthy: "×"
	markPlus              // setup: "+" (add a connection)
	markPause             // paused: two bars
)

var states = []struct {
	name string
	fill color.RGBA
	mark mark
}{
	{"healthy", color.RGBA{0x22, 0xa0, 0x55, 0xff}, markCheck},
	{"degraded", color.RGBA{0xe0, 0x9b, 0x12, 0xff}, markBang},
	{"unhealthy", color.RGBA{0xd0, 0x33, 0x33, 0xff}, markCross},
	{"setup", color.RGBA{0x8a, 0x8f, 0x98, 0xff}, markPlus},
	{"paused", color.RGBA{0x4a, 0x5a, 0x7a, 0xff}, markPause},
}

// draw paints a filled disc with a ring-shaped "O" mark, antialiased.
func draw(size int, fill color.RGBA) *image.RGBA { return drawMark(size, fill, markRing) }

// segment is the coverage of a stroke of half-width w from (x1,y1) to (x2,y2)
// at (px,py), antialiased.
func segment(px, py, x1, y1, x2, y2, w float64) float64 {
	vx, vy := x2-x1, y2-y1
	t := 0.0 // a zero-length stroke is a dot
	if l := vx*vx + vy*vy; l > 0 {
		t = math.Max(0, math.Min(1, ((px-x1)*vx+(py-y1)*vy)/l))
	}
	return clamp(w - math.Hypot(px-x1-t*vx, py-y1-t*vy) + 0.5)
}

// drawMark paints a filled disc with the state's mark in white, antialiased.
func drawMark(size int, fill color.RGBA, m mark) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, size, size))
	c := float64(size) / 2
	r := c - 0.5
	ringOuter, ringInner := r*0.62, r*0.38
	for y := 0; y < size; y++ {
		for x := 0; x < size; x++ {
			dx, dy := float64(x)+0.5-c, float64(y)+0.5-c
			d := math.Hypot(dx, dy)
			alpha := clamp(r - d + 0.5)
			if alpha <= 0 {
				continue
			}
			col := fill
			ring := math.Min(clamp(ringOuter-d+0.5), clamp(d-ringInner+0.5))
			w := r * 0.11 // stroke half-width of the marks
			switch m {
			case markPause:
				// Two bars, each 0.18 r wide, 0.5 r either side of the centre line.
				half, gap, h := r*0.09, r*0.16, r*0.46
				bar := func(cx float64) float64 {
					return math.Min(clamp(half-math.Abs(dx-cx)+0.5), clamp(h-math.Abs(dy)+0.5))
				}
				ring = math.Max(bar(-gap-half), bar(gap+half))
			case markCheck:
				ring = math.Max(segment(dx, dy, -r*0.42, 0, -r*0.12, r*0.32, w), segment(dx, dy, -r*0.12, r*0.32, r*0.45, -r*0.32, w))
			case markBang:
				ring = math.Max(segment(dx, dy, 0, -r*0.5, 0, r*0.12, w), segment(dx, dy, 0, r*0.42, 0, r*0.42, w*1.1))
			case markCross:
				k := r * 0.36
				ring = math.Max(segment(dx, dy, -k, -k, k, k, w), segment(dx, dy, -k, k, k, -k, w))
			case markPlus:
				k := r * 0.46
				ring = math.Max(segment(dx, dy, -k, 0, k, 0, w), segment(dx, dy, 0, -k, 0, k, w))
			}
			col.R = blend(fill.R, 255, ring)
			col.G = blend(fill.G, 255, ring)
			col.B = blend(fill.B, 255, ring)
			col.A = uint8(alpha * 255)
			img.SetRGBA(x, y, col)
		}
	}
	return img
}

func clamp(v float64) float64 { return math.Max(0, math.Min(1, v)) }

func blend(a, b uint8, t float64) uint8 { return uint8(float64(a)*(1-t) + float64(b)*t) }

func write(path string, img image.Image) {
	f, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, img); err != nil {
		log.Fatal(err)
	}
}

func main() {
	dir := "build"
	for _, s := range states {
		write(filepath.Join(dir, "icons", "tray-"+s.name+".png"), drawMark(64, s.fill, s.mark))
		write(filepath.Join(dir, "icons", "app-"+s.name+"-256.png"), drawMark(256, s.fill, s.mark))
	}
	app := draw(512, color.RGBA{0x2b, 0x5c, 0xd6, 0xff})
	write(filepath.Join(dir, "appicon.png"), app)
	write(filepath.Join(dir, "icons", "omniroute-128.png"), draw(128, color.RGBA{0x2b, 0x5c, 0xd6, 0xff}))
}
