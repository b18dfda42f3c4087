; OmniRoute's Windows installer (make package-windows builds it with Debian's
; makensis from the cross-compiled binaries). Per-user: no administrator
; rights, installed under %LOCALAPPDATA%\Programs\OmniRoute. The uninstaller
; removes the program, its shortcuts and its start-at-login entry, never the
; user's data (%APPDATA%\omniroute: connections, keys, the database).
; A 64-bit installer for the 64-bit programs (it also runs under a 64-bit-only Wine).
Target amd64-unicode
!include "LogicLib.nsh"
!ifndef VERSION
  !define VERSION "0.0.0"
!endif
!ifndef OUTFILE
  !define OUTFILE "omniroute-setup.exe"
!endif
!ifndef SRC
  !define SRC "."
!endif

Name "OmniRoute ${VERSION}"
OutFile "${OUTFILE}"
InstallDir "$LOCALAPPDATA\Programs\OmniRoute"
InstallDirRegKey HKCU "Software\OmniRoute" "InstallDir"
RequestExecutionLevel user
; Releases use solid LZMA (the smallest download); make test's installer check
; builds with -DFAST_COMPRESSION (zlib): the same script and files, a minute
; less of compression on a 2-core machine.
!ifdef FAST_COMPRESSION
SetCompressor zlib
!else
SetCompressor /SOLID lzma
!endif
Icon "${SRC}\omniroute.ico"
UninstallIcon "${SRC}\omniroute.ico"
VIProductVersion "${VERSION}.0"
VIAddVersionKey "ProductName" "OmniRoute"
VIAddVersionKey "ProductVersion" "${VERSION}"
VIAddVersionKey "FileVersion" "${VERSION}"
VIAddVersionKey "FileDescription" "OmniRoute installer: a local LLM gateway for AI coding agents"
VIAddVersionKey "CompanyName" "OmniRoute"
VIAddVersionKey "LegalCopyright" "OmniRoute"

Page components
Page directory
Page instfiles
UninstPage uninstConfirm
UninstPage instfiles

!define UNINSTKEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\OmniRoute"
!define RUNKEY "Software\Microsoft\Windows\CurrentVersion\Run"
; The Evergreen WebView2 runtime the desktop window needs.
!define WEBVIEW2 "SOFTWARE\WOW6432Node\Microsoft\EdgeUpdate\Clients\{F3017226-FE2A-4295-8BDF-00C3A9A7E4C5}"

Section "OmniRoute (required)" SecMain
  SectionIn RO
  SetOutPath "$INSTDIR"
  File "${SRC}\omniroute.exe"
  File "${SRC}\omniroute-desktop.exe"
  File "${SRC}\omniroute.ico"
  File "${SRC}\README.md"
  WriteUninstaller "$INSTDIR\uninstall.exe"
  WriteRegStr HKCU "Software\OmniRoute" "InstallDir" "$INSTDIR"
  WriteRegStr HKCU "${UNINSTKEY}" "DisplayName" "OmniRoute"
  WriteRegStr HKCU "${UNINSTKEY}" "DisplayVersion" "${VERSION}"
  WriteRegStr HKCU "${UNINSTKEY}" "Publisher" "OmniRoute"
  WriteRegStr HKCU "${UNINSTKEY}" "DisplayIcon" "$INSTDIR\omniroute.ico"
  WriteRegStr HKCU "${UNINSTKEY}" "UninstallString" '"$INSTDIR\uninstall.exe"'
  WriteRegDWORD HKCU "${UNINSTKEY}" "NoModify" 1
  WriteRegDWORD HKCU "${UNINSTKEY}" "NoRepair" 1
  CreateDirectory "$SMPROGRAMS\OmniRoute"
  CreateShortcut "$SMPROGRAMS\OmniRoute\OmniRoute.lnk" "$INSTDIR\omniroute-desktop.exe" "" "$INSTDIR\omniroute.ico"
  CreateShortcut "$SMPROGRAMS\OmniRoute\Uninstall OmniRoute.lnk" "$INSTDIR\uninstall.exe"
  ; The window needs WebView2 (part of Windows 11 and current Windows 10);
  ; without it, say where to get it: the installer downloads nothing itself.
  ReadRegStr $0 HKLM "${WEBVIEW2}" "pv"
  ReadRegStr $1 HKCU "Software\Microsoft\EdgeUpdate\Clients\{F3017226-FE2A-4295-8BDF-00C3A9A7E4C5}" "pv"
  ${If} $0 == ""
  ${AndIf} $1 == ""
    MessageBox MB_OK|MB_ICONINFORMATION "OmniRoute's window needs Microsoft Edge WebView2, which this computer lacks. Install the Evergreen WebView2 Runtime from Microsoft; until then 'omniroute.exe --headless' serves the gateway and the dashboard in your browser." /SD IDOK
  ${EndIf}
SectionEnd

Section /o "Start OmniRoute at login" SecLogin
  WriteRegStr HKCU "${RUNKEY}" "OmniRoute" '"$INSTDIR\omniroute-desktop.exe" --hidden'
SectionEnd

Section "Uninstall"
  DeleteRegValue HKCU "${RUNKEY}" "OmniRoute"
  Delete "$SMPROGRAMS\OmniRoute\OmniRoute.lnk"
  Delete "$SMPROGRAMS\OmniRoute\Uninstall OmniRoute.lnk"
  RMDir "$SMPROGRAMS\OmniRoute"
  Delete "$INSTDIR\omniroute.exe"
  Delete "$INSTDIR\omniroute-desktop.exe"
  Delete "$INSTDIR\omniroute.ico"
  Delete "$INSTDIR\README.md"
  Delete "$INSTDIR\uninstall.exe"
  RMDir "$INSTDIR"
  DeleteRegKey HKCU "${UNINSTKEY}"
  DeleteRegKey HKCU "Software\OmniRoute"
  ; Each user's data (%APPDATA%\omniroute) is theirs: kept.
SectionEnd
