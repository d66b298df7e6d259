// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <QDialog>
#include <QProcess>
#include <QStringList>

#include <array>

#include "lockscope/capture/capture.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;

namespace lockscope::gui {

// What the Record… dialog asks for, turned into one command line.
struct RecordRequest {
    QString lockscope;        // path of the `lockscope` binary
    QString output;
    QString label;
    double duration_s = 0;    // 0 = until the workload exits
    bool all = false;         // -a instead of a workload
    QStringList workload;     // after --
    QString elevate;          // "" (already root), "pkexec" or "sudo"
    // Which of the probes record leaves off for their cost to ask for,
    // in kOptInProbes' order.
    std::array<bool, kOptInProbes.size()> also_time{};
};

// {program, arguments}: the recorder runs as a separate process, elevated
// with pkexec or sudo, because the GUI itself never needs root. It stops
// when its stdin closes (--stop-on-stdin-close): the GUI cannot signal a
// recorder that runs as root, but it can close the pipe.
QStringList recordCommand(const RecordRequest& request);
// The request with every path absolute: pkexec and sudo reset PATH and
// pkexec the working directory, so "semop-bench" or "out.json" would name
// something else (or nothing) on the other side. Programs not found on
// PATH are left as given, for the recorder to report.
RecordRequest withAbsolutePaths(RecordRequest request);
// The lockscope binary next to this one, in the build tree, or on PATH; "" if none.
QString findLockscopeBinary();
// "" when running as root, else pkexec when available, else sudo; "" also if neither exists.
QString defaultElevation();

class RecordDialog final : public QDialog {
    Q_OBJECT
public:
    explicit RecordDialog(QWidget* parent = nullptr);

signals:
    void recorded(const QString& path);

private:
    void start();
    void readOutput();
    void finished(int exitCode, QProcess::ExitStatus status);

    QLineEdit* workload_ = nullptr;
    QCheckBox* all_ = nullptr;
    QDoubleSpinBox* duration_ = nullptr;
    QLineEdit* label_ = nullptr;
    QLineEdit* output_ = nullptr;
    QComboBox* elevate_ = nullptr;
    std::array<QCheckBox*, kOptInProbes.size()> alsoTime_{};
    QLabel* status_ = nullptr;
    QPlainTextEdit* log_ = nullptr;
    QPushButton* startButton_ = nullptr;
    QPushButton* stopButton_ = nullptr;
    QProcess* process_ = nullptr;
    QString pendingOutput_;
};

} // namespace lockscope::gui
