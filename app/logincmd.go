package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"omniroute/backend/clock"
	"omniroute/backend/config"
	"omniroute/backend/errs"
	"omniroute/backend/providers"
	"omniroute/backend/server"
)

// LoginCommand is `omniroute login <provider>`: the provider's own device
// sign-in (its module's providers.LoginFlow) for a connection. It prints the
// code to enter and the page to enter it on, then waits until the login is
// approved (or refused, or the code expires). With the gateway running the
// login goes through its management API (POST
// /api/providers/login/{provider}, then polls), so the connection routes at
// once; otherwise the CLI does the device flow itself and writes the
// database, and the connection is loaded at the next start.
func LoginCommand(args []string, proc config.Process, stdout, stderr io.Writer) int {
	var words []string
	for _, p := range server.LoginProviders(os.Getenv) {
		words = append(words, p.LoginFlow().Command)
	}
	usage := "usage: omniroute login <provider> (" + strings.Join(words, ", ") + ")"
	if len(args) != 1 {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	offline, ok := server.NewLoginOffline(proc, os.Getenv, args[0])
	if !ok {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	name, id, created, err := loginViaGateway(ctx, proc, offline.Provider.ID, offline.Provider.Name, stdout)
	if errors.Is(err, errNotRunning) {
		name, id, created, err = loginOffline(ctx, offline, stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "omniroute: login failed:", message(err))
		return 1
	}
	verb := "updated"
	if created {
		verb = "created"
	}
	fmt.Fprintf(stdout, "Signed in to %s: connection %q (%s) %s\n", offline.Provider.Name, name, id, verb)
	return 0
}

// showCode tells the user what to do on the provider's site.
func showCode(w io.Writer, provider, userCode, uri string) {
	fmt.Fprintf(w, "To sign in to %s, open %s and enter the code %s\nWaiting for the login to be approved…\n", provider, uri, userCode)
}

// loginViaGateway runs the login of provider (its catalogue id; display its
// name) through the running gateway; errNotRunning when nothing answers on
// its address.
func loginViaGateway(ctx context.Context, proc config.Process, provider, display string, stdout io.Writer) (name, id string, created bool, err error) {
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
	base := "/api/providers/login/" + url.PathEscape(provider)
	if err := call(http.MethodPost, base, &start); err != nil {
		return "", "", false, err
	}
	showCode(stdout, display, start.UserCode, start.VerificationURI)
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
		if err := call(http.MethodGet, base+"/"+url.PathEscape(start.FlowID), &poll); err != nil {
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

// loginOffline runs the device flow in this process and writes the database.
func loginOffline(ctx context.Context, c *server.LoginOffline, stdout io.Writer) (name, id string, created bool, err error) {
	dev, err := c.Flow.Start(ctx, c.Call(time.Now()))
	if err != nil {
		return "", "", false, err
	}
	showCode(stdout, c.Provider.Name, dev.UserCode, dev.VerificationURI)
	interval := dev.Interval
	for {
		if err := clock.Sleep(ctx, interval); err != nil {
			return "", "", false, err
		}
		if !time.Now().Before(dev.ExpiresAt) {
			return "", "", false, errors.New("the code expired before it was entered; run the login again")
		}
		grant, err := c.Flow.Poll(ctx, c.Call(time.Now()), dev.DeviceCode)
		var de *providers.DeviceError
		switch {
		case errors.As(err, &de) && !de.Terminal():
			interval = providers.NextInterval(interval, de)
			continue
		case errors.As(err, &de) && de.Code == providers.DeviceDenied:
			return "", "", false, errors.New("the login was cancelled on " + c.Flow.Site)
		case errors.As(err, &de) && de.Code == providers.DeviceExpired:
			return "", "", false, errors.New("the code expired before it was entered; run the login again")
		case err != nil:
			return "", "", false, err
		}
		res, err := c.Save(ctx, grant, time.Now())
		if err != nil {
			return "", "", false, err
		}
		return res.Connection.Name, res.Connection.ID, res.Created, nil
	}
}
