package health

import (
	"fmt"
	"time"
)

// Human renders a duration for people, the way the dashboard does: "45 s",
// "14 min", "1 h 5 min", "2 d 3 h". Under a second it says "a moment"; whole
// units only (seconds are rounded up so a countdown never says 0 while waiting).
func Human(d time.Duration) string {
	if d <= 0 {
		return "now"
	}
	if d < time.Second {
		return "a moment"
	}
	s := int64((d + time.Second - 1) / time.Second)
	days, hours, mins, secs := s/86400, s%86400/3600, s%3600/60, s%60
	switch {
	case days > 0:
		if hours > 0 {
			return fmt.Sprintf("%d d %d h", days, hours)
		}
		return fmt.Sprintf("%d d", days)
	case hours > 0:
		if mins > 0 {
			return fmt.Sprintf("%d h %d min", hours, mins)
		}
		return fmt.Sprintf("%d h", hours)
	case mins > 0:
		if mins < 10 && secs > 0 {
			return fmt.Sprintf("%d min %d s", mins, secs)
		}
		if secs > 0 {
			mins++ // "back in 14 min" never promises earlier than true
		}
		return fmt.Sprintf("%d min", mins)
	}
	return fmt.Sprintf("%d s", secs)
}
