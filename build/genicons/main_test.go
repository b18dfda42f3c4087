package main

import (
	"image/color"
	"testing"
)

// TestStatesDifferInShape: every pair of tray states differs in its white
// mark, not only in the disc's colour: drawn in one colour, the icons still
// differ in many pixels.
func TestStatesDifferInShape(t *testing.T) {
	grey := color.RGBA{0x80, 0x80, 0x80, 0xff}
	masks := make([][]bool, len(states))
	for i, s := range states {
		img := drawMark(64, grey, s.mark)
		for p := 0; p < len(img.Pix); p += 4 {
			masks[i] = append(masks[i], img.Pix[p] > 0xc0) // the white mark
		}
	}
	for i := range states {
		for j := i + 1; j < len(states); j++ {
			diff := 0
			for p := range masks[i] {
				if masks[i][p] != masks[j][p] {
					diff++
				}
			}
			if diff < 100 {
				t.Errorf("%s and %s differ in %d pixels of shape", states[i].name, states[j].name, diff)
			}
		}
	}
}
