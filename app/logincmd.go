package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/config"
	"omniroute/backend/errs"
	"omniroute/backend/oauth"
	"omniroute/backend/server"
)

// LoginCommand is `omniroute login copilot`: GitHub's device login for a
// GitHub Copilot connection. It prints the code to enter and the page to
// enter it on, then waits until the login is approved (or refused, or the
// code expires). With the gateway running the login goes through its
// management API (POST /api/providers/login/copilot, then polls), so the
// connection routes at once; otherwise the CLI does the device flow itself
// and writes the database, and the connection is loaded at the next start.
func LoginCommand(args []string, proc config.Process, stdout, stderr io.Writer) int {
	const usage = "usage: omniroute login copilot"
	if len(args) != 1 || (args[0] != "copilot" && args[0] != "github-copilot") {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	name, id, created, err := copilotViaGateway(ctx, proc, stdout)
	if errors.Is(err, errNotRunning) {
		name, id, created, err = copilotOffline(ctx, proc, stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "omniroute: login failed:", message(err))
		return 1
	}
	verb := "updated"
	if created {
		verb = "created"
	}
	fmt.Fprintf(stdout, "Signed in to GitHub Copilot: connection %q (%s) %s\n", name, id, verb)
	return 0
}

// showCode tells the user what to do on GitHub.
func showCode(w io.Writer, userCode, uri string) {
	fmt.Fprintf(w, "To sign in to GitHub Copilot, open %s and enter the code %s\nWaiting for the login to be approved…\n", uri, userCode)
}

// copilotViaGateway runs the login through the running gateway; errNotRunning
// when nothing answers on its address.
func copilotViaGateway(ctx context.Context, proc config.Process, stdout io.Writer) (name, id string, created bool, err error) {
	token, err := server.LoadOrCreateToken(proc.DataDir)
	if err != nil {
		return "", "", false, err
	}
	client := &http.Client{Timeout: 60 * time.Second}
	call := func(method, path string, out any) error {
		req, err := http.NewRequestWithContext(ctx, method, proc.BaseURL()+path, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			var op *net.OpError
			if errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &op) && op.Op == "dial" {
				return errNotRunning
			}
			return err
		}
		defer resp.Body.Close()
		var env struct {
			Error struct {
				Message string `json:"message"`
				Code    string `json:"code"`
			} `json:"error"`
		}
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if resp.StatusCode >= 300 {
			if json.Unmarshal(raw, &env) == nil && env.Error.Code != "" {
				return errs.New(errs.Invalid, env.Error.Code, "%s", env.Error.Message)
			}
			return fmt.Errorf("unexpected answer from the gateway (HTTP %d)", resp.StatusCode)
		}
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("unexpected answer from the gateway (HTTP %d)", resp.StatusCode)
		}
		return nil
	}
	var start struct {
		FlowID          string `json:"flowId"`
		UserCode        string `json:"userCode"`
		VerificationURI string `json:"verificationUri"`
		Interval        int    `json:"interval"`
	}
	if err := call(http.MethodPost, "/api/providers/login/copilot", &start); err != nil {
		return "", "", false, err
	}
	showCode(stdout, start.UserCode, start.VerificationURI)
	interval := time.Duration(max(start.Interval, 1)) * time.Second
	for {
		if err := clock.Sleep(ctx, interval); err != nil {
			return "", "", false, err
		}
		var poll struct {
			Status   string `json:"status"`
			Interval int    `json:"interval"`
			Created  bool   `json:"created"`
			Error    struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
			Connection struct {
				ID   string `json:"id"`
				Name string `json:"name"`
			} `json:"connection"`
		}
		if err := call(http.MethodGet, "/api/providers/login/copilot/"+start.FlowID, &poll); err != nil {
			return "", "", false, err
		}
		switch poll.Status {
		case "pending":
			if poll.Interval > 0 {
				interval = time.Duration(poll.Interval) * time.Second
			}
		case "complete":
			return poll.Connection.Name, poll.Connection.ID, poll.Created, nil
		default:
			return "", "", false, errs.New(errs.Invalid, poll.Error.Code, "%s", poll.Error.Message)
		}
	}
}

// copilotOffline runs the device flow in this process and writes the database.
func copilotOffline(ctx context.Context, proc config.Process, stdout io.Writer) (name, id string, created bool, err error) {
	c, ok := server.NewCopilotOffline(proc, os.Getenv)
	if !ok {
		return "", "", false, errors.New("GitHub Copilot is not in the catalogue")
	}
	o := *c.Provider.OAuth
	dev, err := oauth.StartDevice(ctx, c.Client, o, time.Now())
	if err != nil {
		return "", "", false, err
	}
	showCode(stdout, dev.UserCode, dev.VerificationURI)
	interval := dev.Interval
	for {
		if err := clock.Sleep(ctx, interval); err != nil {
			return "", "", false, err
		}
		if !time.Now().Before(dev.ExpiresAt) {
			return "", "", false, errors.New("the code expired before it was entered; run the login again")
		}
		tok, err := oauth.PollDevice(ctx, c.Client, o, dev.DeviceCode)
		var de *oauth.DeviceError
		switch {
		case errors.As(err, &de) && !de.Terminal():
			interval = oauth.NextInterval(interval, de)
			continue
		case errors.As(err, &de) && de.Code == oauth.DeviceDenied:
			return "", "", false, errors.New("the login was cancelled on GitHub")
		case errors.As(err, &de) && de.Code == oauth.DeviceExpired:
			return "", "", false, errors.New("the code expired before it was entered; run the login again")
		case err != nil:
			return "", "", false, err
		}
		res, err := c.Save(ctx, tok, time.Now())
		if err != nil {
			return "", "", false, err
		}
		return res.Connection.Name, res.Connection.ID, res.Created, nil
	}
}
